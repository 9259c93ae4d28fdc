"""The escape-room game as a Mesa 3.3 model: one ``step()`` resolves one round of simultaneous moves.

Decisions are gathered first (every alive seat sees the same start-of-round state; LLM calls of a round run
concurrently), then ``step()`` applies the rules. State changes stay sequential and explicit.

The game is written once, as a generator (:meth:`EscapeRoomModel._game`) that yields what it needs from the
seats (decisions, private puzzle answers, end-of-game hooks) and is driven two ways: ``await play()`` (the
async path: LLM seats' calls of a round run concurrently) and :meth:`EscapeRoomModel.play_sync` (the fast
path when no seat needs the LLM: direct calls, no coroutine per decision). Both give identical games.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

import mesa

from games.escape_room.options import PARTNER_SEAT, EscapeRoomOptions
from games.escape_room.policy import EscapeRoomPolicy
from games.escape_room.puzzles import generate_puzzles, plausible_wrong_answer
from games.escape_room.rules import (
    GameState,
    RuleOptions,
    illegal_reason,
    new_game,
    resolve_round,
    resolved_action,
)
from games.escape_room.types import (
    Action,
    Announcements,
    CapsuleView,
    Decision,
    GameSummary,
    ModelCall,
    Observation,
    RoundReport,
    Solution,
)
from trustsim.mesa_base import Agent


class Seat(Agent):
    """A player seat: a Mesa agent that delegates decisions to its policy (which persists across games)."""

    def __init__(self, model: EscapeRoomModel, seat: str, policy: EscapeRoomPolicy) -> None:
        super().__init__(model)
        self.seat = seat
        self.policy = policy
        self.is_partner = seat == PARTNER_SEAT


CapsuleTable = dict[int, tuple[CapsuleView, ...]]
"""The public capsule table: puzzle index → its capsules."""


@dataclass(slots=True)
class DecisionRecord:
    """One seat's decision in one round, after the legality check."""

    seat: str
    decision: Decision
    requested: str  # pass | verify | volunteer | invalid
    resolved: Action
    valid: bool
    invalid_reason: str | None
    coins_before: int
    round: int


@dataclass(slots=True)
class GameRecord:
    """Everything the tables need about one finished game."""

    game: int
    seed: int
    d_correct: bool
    partner_puzzle: int
    state: GameState = field(init=False)  # set once the capsules are sealed
    decisions: list[DecisionRecord] = field(default_factory=list)
    rounds_alive: dict[str, int] = field(default_factory=dict)
    views: dict[int, CapsuleTable] = field(default_factory=dict)  # round → capsule table


Request = tuple[Any, ...]
"""What the game asks its driver for: ``("decide", seats, observations)`` → decisions, ``("solve", seat, puzzle,
purpose)`` → a :class:`Solution`, ``("end", seat, summary)`` → the model call of the seat's reflection or None."""


def round_digest(round_: int, coins: dict[str, int], alive: list[str], views: CapsuleTable) -> str:
    """The ``digest`` of a ``round_start`` event: what every seat observes at the start of the round (the round,
    coins, alive seats and capsule table), as the first 16 hex digits of the sha256 of its ``repr``."""
    text = repr((round_, sorted(coins.items()), alive, views))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def decision_fields(r: DecisionRecord) -> dict[str, Any]:
    """The fields of a ``decision`` event: the request and how it resolved, then (model answers only) the raw
    answer with its parse and cost, and what the seat stated."""
    d = r.decision
    fields: dict[str, Any] = {
        "round": r.round,
        "seat": r.seat,
        "action": None if d.action is None else d.action.describe(),
        "valid": r.valid,
        "resolved": r.resolved.describe(),
    }
    if r.invalid_reason:
        fields["invalid_reason"] = r.invalid_reason
    if d.raw_text is not None:  # a model's answer: its text, what was read from it, and the call's fields
        fields |= {"raw": d.raw_text, "reasoning": d.reasoning, "parse_error": d.parse_error} | call_fields(d)
    if d.confidence is not None:
        fields["confidence"] = d.confidence
    if d.trusted is not None:
        fields["trusted"] = d.trusted
    return fields


def call_fields(call: ModelCall | Decision) -> dict[str, Any]:
    """The fields a model call adds to its event (a decision's, or ``verification`` with ``verifier=llm``,
    ``own_answer``, ``reflection``): the raw answer, its cost and its request-store key."""
    fields: dict[str, Any] = {
        "raw": call.raw_text,
        "latency_s": round(call.latency_s, 4),
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cached_tokens": call.cached_tokens,
        "cached": call.cached,
    }
    if call.request_key:
        fields["request"] = call.request_key
    return fields


_HOOKS = {"start": ("start_game",), "observe": ("observe",), "end": ("end_game", "aend_game")}
"""The per-game hooks of :class:`EscapeRoomPolicy` the game calls, by what it calls them for."""


def _overrides(policy: EscapeRoomPolicy, *methods: str) -> bool:
    """True when ``policy``'s class overrides any of ``methods`` of :class:`EscapeRoomPolicy`."""
    return any(getattr(type(policy), m) is not getattr(EscapeRoomPolicy, m) for m in methods)


class EscapeRoomModel(mesa.Model):
    """The table: its seats (Mesa agents, created once), the session seated and the game in play.
    ``await model.play()`` (or ``model.play_sync()`` when :attr:`synchronous`) runs the game to the end and
    returns its GameRecord; :meth:`next_game` deals the session's next game, :meth:`next_session` seats the
    next session (sessions played one after another share a table)."""

    _views: CapsuleTable  # the capsule table the seats observe (shared by the observations until it changes)

    def __init__(
        self,
        *,
        seed: int,
        game: int,
        options: EscapeRoomOptions,
        policies: dict[str, EscapeRoomPolicy],
        partner_puzzle: int,
        recorder: Any = None,
        session: int = 0,
        used_puzzles: set[str] | None = None,
    ) -> None:
        """Set the table, seat the session and deal game ``game`` (seeded by ``seed``); :meth:`next_game` deals the
        session's next games, :meth:`next_session` seats another session. ``used_puzzles``: the session's puzzle
        texts so far (no game draws one twice; each adds its own)."""
        super().__init__(seed=seed)
        self.options = options
        self.recorder = recorder
        for seat in options.seats:
            Seat(self, seat, policies[seat])
        self.seats: dict[str, Seat] = {a.seat: a for a in self.agents}
        self.rules = RuleOptions(
            own_verify=options.own_verify,
            capsule_names=options.capsule_names,
            malformed_volunteer=options.malformed_volunteer,
        )
        self._seat_session(session, policies, partner_puzzle, used_puzzles)
        self._deal(seed, game)

    def next_session(
        self, *, session: int, policies: dict[str, EscapeRoomPolicy], partner_puzzle: int, seed: int
    ) -> None:
        """Seat another session at this table (its policies take the same seats, Mesa agents created once) and
        deal its first game, seeded by ``seed``: the session plays as it would at a new table."""
        for seat, agent in self.seats.items():
            agent.policy = policies[seat]
        self._seat_session(session, policies, partner_puzzle, None)
        self.next_game(seed=seed, game=1)

    def _seat_session(
        self,
        session: int,
        policies: dict[str, EscapeRoomPolicy],
        partner_puzzle: int,
        used_puzzles: set[str] | None,
    ) -> None:
        """Per-session state: the puzzle owners, the policies' hooks, the session's puzzles so far."""
        self.session = session
        self.partner_puzzle = partner_puzzle
        seats = self.options.seats
        others = [k for k in range(1, len(seats) + 1) if k != partner_puzzle]
        self.owners = {k: s for k, s in zip(others, [s for s in seats if s != PARTNER_SEAT], strict=True)}
        self.owners[partner_puzzle] = PARTNER_SEAT
        # the seats whose policy has each per-game hook (a hook left as the base class's no-op is not called)
        self._hooked = {
            hook: frozenset(s for s, p in policies.items() if _overrides(p, *hooks))
            for hook, hooks in _HOOKS.items()
        }
        # True when the game can be played by ``play_sync``: no seat makes asynchronous calls (an LLM),
        # overrides ``aend_game``, or is asked to solve a puzzle (``own_answer`` and ``verifier`` exact)
        self.synchronous = (
            self.options.own_answer != "llm"
            and self.options.verifier != "llm"
            and not any(p.is_async or _overrides(p, "aend_game") for p in policies.values())
        )
        self.used_puzzles = used_puzzles if used_puzzles is not None else set()

    def next_game(self, *, seed: int, game: int) -> None:
        """Deal the session's next game at the same table (the same seats and policies): its ``random`` is
        reseeded with ``seed``, exactly as a new model seeded with ``seed`` would be, so a game plays the same
        whether its model is new or reused. (Mesa's numpy ``rng`` keeps the table's first seed: the game
        draws only from ``random``.)"""
        self.random.seed(seed)
        self._seed = seed
        self.steps = 0
        self._deal(seed, game)

    def _deal(self, seed: int, game: int) -> None:
        """Fresh per-game state: puzzles drawn, nothing sealed yet, no round played."""
        self.game = game
        self.d_correct = self.options.d_correct[game - 1]
        self.puzzles = generate_puzzles(self.random, len(self.options.seats), self.used_puzzles)
        self.record = GameRecord(
            game=game, seed=seed, d_correct=self.d_correct, partner_puzzle=self.partner_puzzle
        )
        self._pending: dict[str, Action] = {}
        self._verify_answers: dict[str, int] = {}
        # verifier=llm: each verifying seat's solution this round; own_answer=llm: the seats' own answers
        # (their events follow game_start)
        self._verify_calls: dict[str, Solution] = {}
        self._own_answers: list[dict[str, Any]] = []
        self._texts: list[str] = []  # the rounds' announcements rendered so far (see Announcements)

    # -- setup ---------------------------------------------------------------------------------------------
    def _seal(self) -> Generator[Request, Any, GameState]:
        sealed: dict[int, int] = {}
        for puzzle in self.puzzles:
            owner = self.owners[puzzle.index]
            if owner == PARTNER_SEAT:
                value = (
                    puzzle.answer if self.d_correct else plausible_wrong_answer(self.random, puzzle.answer)
                )
            elif self.options.own_answer == "llm":
                solution = yield ("solve", self.seats[owner], puzzle, "own_answer")
                answer = solution.answer
                value = answer if answer is not None else plausible_wrong_answer(self.random, puzzle.answer)
                if solution.call is not None:
                    self._own_answers.append(
                        {"seat": owner, "puzzle": puzzle.index, "answer": answer} | call_fields(solution.call)
                    )
            else:
                value = puzzle.answer
            sealed[puzzle.index] = value
        return new_game(
            self.puzzles, self.owners, sealed, self.options.coins, self.options.max_rounds, rules=self.rules
        )

    def _emit(self, type: str, fields: dict[str, Any]) -> None:
        """Record an event of this game (its ``session`` and ``game`` first, then ``fields``), if recording."""
        if self.recorder is not None:
            self.recorder.event(type, session=self.session, game=self.game, **fields)

    # -- one round -----------------------------------------------------------------------------------------
    def _collect(self, verified: Iterable[int]) -> Generator[Request, Any, None]:
        """Every alive seat observes the same state and decides; illegal requests resolve as pass.
        ``verified``: the puzzles verified last round (only their capsules can have changed)."""
        state = self.state
        round_ = state.round + 1
        views = self._views
        if verified:  # a new table (earlier observations keep theirs), sharing the puzzles not verified
            views = self._views = dict(views)
            for k in verified:
                views[k] = state.puzzle_views(k)
        self.record.views[round_] = views
        history = Announcements(state.reports, self._texts, len(state.reports))
        if self.recorder is not None:
            self._emit(
                "round_start",
                {
                    "round": round_,
                    "alive": state.alive,
                    "coins": state.coins,
                    "digest": round_digest(round_, state.coins, state.alive, views),
                },
            )
        seats, puzzles, own, coins = self.seats, state.puzzles, state.own_puzzles, state.coins
        alive = [seats[s] for s in state.alive]
        shown = tuple(state.alive)
        game, max_rounds, owners = self.game, state.max_rounds, self.owners
        observations = [
            Observation(
                s, game, round_, max_rounds, puzzles[own[s]], dict(coins), shown, views, owners, history
            )
            for s in state.alive
        ]
        if round_ == 1:  # the game starts: each seat that wants it sees its first observation now
            starts = self._hooked["start"]
            for agent, obs in zip(alive, observations, strict=True):
                if agent.seat in starts:
                    agent.policy.start_game(obs)
        decisions = yield ("decide", alive, observations)
        self._pending = {}
        for agent, decision in zip(alive, decisions, strict=True):
            self._pending[agent.seat] = self._check(agent.seat, decision)
        self._verify_answers = {}
        self._verify_calls = {}
        for seat, action in self._pending.items():
            if action.kind != "verify":
                continue
            puzzle = state.puzzles[action.target_puzzle]
            if self.options.verifier == "llm":
                solution = yield ("solve", self.seats[seat], puzzle, "verify")
                self._verify_answers[seat] = solution.answer if solution.answer is not None else -1
                if solution.call is not None:
                    self._verify_calls[seat] = solution
            else:
                self._verify_answers[seat] = puzzle.answer

    def _check(self, seat: str, decision: Decision) -> Action:
        state = self.state
        action = decision.action
        if action is None:
            reason: str | None = "unparseable"
            resolved = Action.pass_()
        else:
            reason = illegal_reason(state, seat, action)
            resolved = action if reason is None else resolved_action(state, action, reason)
        record = (
            DecisionRecord(  # seat, decision, requested, resolved, valid, invalid_reason, coins_before, round
                seat,
                decision,
                "invalid" if action is None else action.kind,
                resolved,
                reason is None,
                reason,
                state.coins[seat],
                state.round + 1,
            )
        )
        self.record.decisions.append(record)
        if self.recorder is not None:
            self._emit("decision", decision_fields(record))
        return resolved

    def step(self) -> None:
        """Resolve the round whose decisions were gathered (``_collect``)."""
        state = self.state
        for seat in state.alive:
            self.record.rounds_alive[seat] = self.record.rounds_alive.get(seat, 0) + 1
        report = resolve_round(state, self._pending, self._verify_answers, self.random, game=self.game)
        self._record_round(report)

    def _record_round(self, report: RoundReport) -> None:
        if self.recorder is None:
            return
        round_ = report.round
        for v in report.verifications:
            fields = {
                "round": round_,
                "seat": v.seat,
                "puzzle": v.puzzle,
                "capsule": v.capsule,
                "created": v.created,
            }
            if v.already:
                fields["already_endorsed"] = True
            solution = self._verify_calls.get(v.seat)
            if solution is not None and solution.call is not None:  # the model's answer, and how it was asked
                fields |= {"answer": solution.answer} | call_fields(solution.call)
            self._emit("verification", fields)
        if report.chosen_volunteer:
            self._emit(
                "volunteer",
                {
                    "round": round_,
                    "volunteers": report.volunteers,
                    "chosen": report.chosen_volunteer,
                    "password": report.password,
                    "correct": report.password_correct,
                },
            )
        for seat, cause in report.deaths:
            self._emit("death", {"round": round_, "seat": seat, "cause": cause})
        self._emit("round_end", {"round": round_, "escaped": report.escaped})

    # -- a whole game --------------------------------------------------------------------------------------
    def _game(self) -> Generator[Request, Any, None]:
        """The whole game, yielding what it needs from the seats (see :data:`Request`)."""
        self.state = yield from self._seal()
        self.record.state = self.state
        if self.recorder is not None:
            puzzles = {
                p.slot: {"text": p.text, "answer": p.answer, "owner": self.owners[p.index]}
                for p in self.puzzles
            }
            self._emit(
                "game_start",
                {
                    "seed": self.record.seed,
                    "d_correct": self.d_correct,
                    "partner_puzzle": self.record.partner_puzzle,
                    "puzzles": puzzles,
                    "sealed": {c.label: c.value for caps in self.state.capsules.values() for c in caps},
                },
            )
            for fields in self._own_answers:  # own_answer=llm: how each seat's own capsule was sealed
                self._emit("own_answer", fields)
        self._views = self.state.capsule_views()
        observers, enders = self._hooked["observe"], self._hooked["end"]
        verified: list[int] = []  # the capsule table changes only through verifications
        while not self.state.over:
            alive_before = [s for s in self.state.alive if s in observers]
            yield from self._collect(verified)
            self.step()
            report = self.state.reports[-1]
            verified = [v.puzzle for v in report.verifications]
            for seat in alive_before:
                self.seats[seat].policy.observe(report)
        state = self.state
        scores = {s: state.score(s) for s in state.seats}
        truth = None
        if self.options.reveal_after_game:
            truth = {
                c.label: c.value == state.puzzles[k].answer
                for k, caps in state.capsules.items()
                for c in caps
            }
            self._emit("reveal", {"capsules": truth})  # what every seat is told: label → right
        reports = tuple(state.reports)
        survivors = tuple(state.alive)
        for seat in state.seats:
            if seat not in enders:
                continue
            summary = GameSummary(
                game=self.game,
                escaped=state.escaped,
                rounds=state.round,
                survivors=survivors,
                coins=dict(state.coins),
                scores=scores,
                own_score=scores[seat],
                seat=seat,
                reports=reports,
                capsule_truth=truth,
            )
            reflection = yield ("end", self.seats[seat], summary)
            if reflection is not None:  # the model call the seat's memory made between games
                self._emit("reflection", {"seat": seat} | call_fields(reflection))
        self._emit(
            "game_end",
            {
                "outcome": state.outcome,
                "rounds": state.round,
                "survivors": state.alive,
                "coins": state.coins,
                "scores": scores,
                "escape_round": state.escape_round,
            },
        )

    def play_sync(self) -> GameRecord:
        """Play the game with direct calls (no event loop); only when :attr:`synchronous`."""
        if not self.synchronous:
            raise RuntimeError("a seat of this game needs asynchronous calls; use `await model.play()`")
        game = self._game()
        send = game.send
        value: Any = None
        try:
            while True:
                request = send(value)
                if request[0] == "decide":
                    value = [a.policy.decide(o) for a, o in zip(request[1], request[2], strict=True)]
                else:  # "end" (synchronous games ask for no puzzle answers)
                    value = request[1].policy.end_game(request[2])
        except StopIteration:
            return self.record

    async def play(self) -> GameRecord:
        """Play the game; seats' asynchronous (LLM) calls of a round run concurrently."""
        game = self._game()
        value: Any = None
        try:
            while True:
                request = game.send(value)
                kind = request[0]
                if kind == "decide":
                    seats, observations = request[1], request[2]
                    if any(a.policy.is_async for a in seats):
                        value = await asyncio.gather(
                            *(a.policy.adecide(o) for a, o in zip(seats, observations, strict=True))
                        )
                    else:
                        value = [a.policy.decide(o) for a, o in zip(seats, observations, strict=True)]
                elif kind == "solve":
                    seat, puzzle, purpose = request[1], request[2], request[3]
                    if purpose == "verify":
                        value = await seat.policy.asolve(puzzle)
                    else:
                        value = await seat.policy.asolve(puzzle, purpose=purpose)
                else:
                    value = await request[1].policy.aend_game(request[2])
        except StopIteration:
            return self.record
