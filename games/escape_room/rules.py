"""Escape-room rules as plain, deterministic code (no Mesa, no LLM).

A round: every alive seat's requested action is checked for legality (illegal → invalid, resolved as pass);
verifications resolve first in seat order; then one volunteer, chosen uniformly at random, submits its
password; if nobody volunteered one alive seat is eliminated uniformly at random.

Rule options (:class:`RuleOptions`) default to the reference study's behaviour (``docs/escape_room.md``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from games.escape_room.types import Action, Capsule, CapsuleView, Puzzle, RoundReport, VerificationReport

WRONG_PASSWORD = "wrong_password"
NO_VOLUNTEER = "no_volunteer"

Draw = Callable[[str, Sequence[str]], str]
"""``draw(kind, options) -> option``: picks the volunteer (``kind="volunteer"``) or the eliminated seat
(``kind="eliminate"``). The default draws uniformly with the game's RNG; a replay passes recorded draws."""


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """Rule variants. Defaults are the reference study's rules.

    ``own_verify``: ``charge`` — a seat may verify its own puzzle; it costs a coin, counts as a verification
    and changes no capsule (reference); ``illegal`` — recorded invalid, resolved as pass.
    ``capsule_names``: ``lenient`` — a password names capsules as the reference resolved them (an exact label
    first, else the first capsule created by a named seat, else the first endorsed by one); ``exact`` — only
    exact labels.
    ``malformed_volunteer``: ``pass`` — a volunteer whose password misses a puzzle or names no capsule is
    invalid and resolves as pass; ``die`` (reference) — it stays a volunteer (still recorded invalid) and,
    if chosen, dies as a wrong password.
    """

    own_verify: str = "charge"
    capsule_names: str = "lenient"
    malformed_volunteer: str = "pass"


MALFORMED_PASSWORD = ("incomplete_password", "missing_capsule")


@dataclass(slots=True)
class GameState:
    """The full (hidden + public) state of one game."""

    puzzles: dict[int, Puzzle]
    owners: dict[int, str]  # puzzle index → seat
    seats: tuple[str, ...]
    capsules: dict[int, list[Capsule]]
    coins: dict[str, int]
    alive: list[str]
    max_rounds: int
    round: int = 0
    escaped: bool = False
    escape_round: int | None = None
    deaths: list[tuple[str, str, int]] = field(default_factory=list)  # (seat, cause, round)
    reports: list[RoundReport] = field(default_factory=list)
    rules: RuleOptions = field(default_factory=RuleOptions)
    own_puzzles: dict[str, int] = field(default_factory=dict)  # seat → its puzzle (``owners`` inverted)

    @property
    def over(self) -> bool:
        return self.escaped or not self.alive or self.round >= self.max_rounds

    @property
    def outcome(self) -> str:
        if self.escaped:
            return "escaped"
        return "all_dead" if not self.alive else "max_rounds"

    def own_puzzle(self, seat: str) -> int:
        index = self.own_puzzles.get(seat)
        if index is None:
            index = next((k for k, owner in self.owners.items() if owner == seat), None)
            if index is None:
                raise KeyError(seat)
        return index

    def capsule_views(self) -> dict[int, tuple[CapsuleView, ...]]:
        return {k: self.puzzle_views(k) for k in self.capsules}

    def puzzle_views(self, puzzle: int) -> tuple[CapsuleView, ...]:
        """The public face of one puzzle's capsules."""
        return tuple([CapsuleView(c.label, tuple(c.endorsers)) for c in self.capsules[puzzle]])

    def find_capsule(self, puzzle: int, label: str) -> Capsule | None:
        """The capsule of ``puzzle`` labelled exactly ``label``."""
        for capsule in self.capsules.get(puzzle, ()):
            if capsule.label == label:
                return capsule
        return None

    def resolve_capsule(self, puzzle: int, name: str) -> Capsule | None:
        """The capsule a password's ``name`` selects for ``puzzle`` under the rules' ``capsule_names``.

        Lenient (reference ``_find_matching_capsule``): an exact label; else the seats named after the dash
        (``Q4-C``, ``Q1-A+C+B``, ``Q1-A,B``) select the first capsule whose creator is among them, else the
        first capsule any of them endorses.
        """
        exact = self.find_capsule(puzzle, name)
        if exact is not None or self.rules.capsule_names == "exact" or "-" not in name:
            return exact
        named = {s.strip() for s in re.split(r"[+,]", name.split("-", 1)[1]) if s.strip()}
        capsules = self.capsules.get(puzzle, ())
        for capsule in capsules:
            if capsule.endorsers and capsule.endorsers[0] in named:
                return capsule
        for capsule in capsules:
            if named & set(capsule.endorsers):
                return capsule
        return None

    def score(self, seat: str) -> int:
        return self.coins[seat] if self.escaped and seat in self.alive else 0


def new_game(
    puzzles: list[Puzzle],
    owners: dict[int, str],
    sealed: dict[int, int],
    coins: int,
    max_rounds: int,
    rules: RuleOptions | None = None,
) -> GameState:
    """Seal every seat's answer into a capsule for its puzzle, endorsed by its owner."""
    seats = tuple(sorted(owners.values()))
    capsules = {  # Capsule(label, puzzle, value, endorsers)
        p.index: [Capsule(f"Q{p.index}-{owners[p.index]}", p.index, sealed[p.index], [owners[p.index]])]
        for p in puzzles
    }
    return GameState(
        puzzles={p.index: p for p in puzzles},
        owners=dict(owners),
        seats=seats,
        capsules=capsules,
        coins={s: coins for s in seats},
        alive=list(seats),
        max_rounds=max_rounds,
        rules=rules or RuleOptions(),
        own_puzzles={owner: k for k, owner in owners.items()},
    )


def illegal_reason(state: GameState, seat: str, action: Action) -> str | None:
    """Why ``action`` is illegal for ``seat`` now, or None when it is legal."""
    if action.kind == "pass":
        return None
    if action.kind == "verify":
        if action.target not in state.puzzles:
            return "bad_target"
        if state.owners[action.target] == seat and state.rules.own_verify == "illegal":
            return "verify_own_puzzle"
        if state.coins[seat] <= 0:
            return "no_coins"
        return None
    if action.kind == "volunteer":
        password = action.password or {}
        if set(password) != set(state.puzzles):
            return "incomplete_password"
        for k, label in password.items():
            if state.resolve_capsule(k, label) is None:
                return "missing_capsule"
        return None
    return "unknown_action"


def resolved_action(state: GameState, action: Action, reason: str | None) -> Action:
    """What an action resolves as, given its illegality ``reason``: itself when legal, else pass — except a
    malformed password under ``malformed_volunteer=die``, which stays a (doomed) volunteer."""
    if reason is None:
        return action
    if (
        reason in MALFORMED_PASSWORD
        and action.kind == "volunteer"
        and state.rules.malformed_volunteer == "die"
    ):
        return Action("volunteer", password=dict(action.password or {}))
    return Action.pass_()


def _verify(state: GameState, seat: str, puzzle: int, answer: int) -> VerificationReport:
    state.coins[seat] -= 1
    if state.owners[puzzle] == seat:  # own puzzle (legal only with own_verify=charge): no capsule changes
        own = state.capsules[puzzle][0]
        return VerificationReport(seat, puzzle, own.label, False, True, tuple(own.endorsers))
    for capsule in state.capsules[puzzle]:
        if capsule.value == answer:
            already = seat in capsule.endorsers
            if not already:
                capsule.endorsers.append(seat)
            return VerificationReport(seat, puzzle, capsule.label, False, already, tuple(capsule.endorsers))
    existing = {c.label for c in state.capsules[puzzle]}
    label, n = f"Q{puzzle}-{seat}", 2
    while label in existing:
        label, n = f"Q{puzzle}-{seat}{n}", n + 1
    state.capsules[puzzle].append(Capsule(label=label, puzzle=puzzle, value=answer, endorsers=[seat]))
    return VerificationReport(seat, puzzle, label, created=True, endorsers=(seat,))


def _check_password(state: GameState, password: dict[int, str]) -> tuple[dict[int, str], bool]:
    """The labels a password's names select now (see :meth:`GameState.resolve_capsule`; a name that selects
    nothing is kept as written), and whether it is right: every slot named, each by a capsule holding its
    puzzle's answer."""
    labels = {}
    correct = password.keys() == state.puzzles.keys()
    for k, name in sorted(password.items()):
        capsule = state.resolve_capsule(k, name)
        if capsule is None:
            labels[k] = name
            correct = False
        else:
            labels[k] = capsule.label
            if correct and capsule.value != state.puzzles[k].answer:
                correct = False
    return labels, correct


def _uniform(rng: random.Random) -> Draw:
    """The default draw: uniform with the game's RNG."""

    def draw(kind: str, options: Sequence[str]) -> str:
        return options[rng.randrange(len(options))]

    return draw


def resolve_round(
    state: GameState,
    resolved: dict[str, Action],
    verify_answers: dict[str, int],
    rng: random.Random,
    game: int = 1,
    draw: Draw | None = None,
) -> RoundReport:
    """Apply one round of already-legal actions (seat → action) and return the public report.

    ``verify_answers`` holds each verifier's private answer to its target puzzle. The volunteer and the
    eliminated seat are drawn uniformly with ``rng`` unless ``draw`` is given (a replay of recorded draws).
    Password names resolve after the round's verifications, as in the reference.
    """
    if draw is None:
        draw = _uniform(rng)
    state.round += 1
    verifications = []
    volunteers = []
    for seat in state.seats:
        action = resolved.get(seat)
        if action is None:
            continue
        if action.kind == "verify":
            verifications.append(_verify(state, seat, action.target_puzzle, verify_answers[seat]))
        elif action.kind == "volunteer":
            volunteers.append(seat)
    chosen: str | None = None
    password: dict[int, str] | None = None
    correct: bool | None = None
    deaths: list[tuple[str, str]] = []
    if volunteers:
        chosen = draw("volunteer", tuple(volunteers))
        password, correct = _check_password(state, resolved[chosen].password_labels)
        if correct:
            state.escaped = True
            state.escape_round = state.round
        else:
            deaths.append((chosen, WRONG_PASSWORD))
    else:
        victim = draw("eliminate", tuple(state.alive))
        deaths.append((victim, NO_VOLUNTEER))
    for seat, cause in deaths:
        state.alive.remove(seat)
        state.deaths.append((seat, cause, state.round))
    report = RoundReport(
        game=game,
        round=state.round,
        actions={s: resolved[s].describe() for s in state.seats if s in resolved},
        verifications=tuple(verifications),
        volunteers=tuple(volunteers),
        chosen_volunteer=chosen,
        password=password,
        password_correct=correct,
        deaths=tuple(deaths),
        escaped=state.escaped,
    )
    state.reports.append(report)
    return report
