"""Escape-room rules as plain, deterministic code (no Mesa, no LLM).

A round: every alive seat's requested action is checked for legality (illegal → invalid, resolved as pass);
verifications resolve first in seat order; then one volunteer, chosen uniformly at random, submits its
password; if nobody volunteered one alive seat is eliminated uniformly at random.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from games.escape_room.types import Action, Capsule, CapsuleView, Puzzle, RoundReport, VerificationReport

WRONG_PASSWORD = "wrong_password"
NO_VOLUNTEER = "no_volunteer"


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

    @property
    def over(self) -> bool:
        return self.escaped or not self.alive or self.round >= self.max_rounds

    @property
    def outcome(self) -> str:
        if self.escaped:
            return "escaped"
        return "all_dead" if not self.alive else "max_rounds"

    def own_puzzle(self, seat: str) -> int:
        for index, owner in self.owners.items():
            if owner == seat:
                return index
        raise KeyError(seat)

    def capsule_views(self) -> dict[int, tuple[CapsuleView, ...]]:
        return {
            k: tuple(CapsuleView(c.label, tuple(c.endorsers)) for c in caps)
            for k, caps in self.capsules.items()
        }

    def find_capsule(self, puzzle: int, label: str) -> Capsule | None:
        for capsule in self.capsules.get(puzzle, ()):
            if capsule.label == label:
                return capsule
        return None

    def score(self, seat: str) -> int:
        return self.coins[seat] if self.escaped and seat in self.alive else 0


def new_game(
    puzzles: list[Puzzle], owners: dict[int, str], sealed: dict[int, int], coins: int, max_rounds: int
) -> GameState:
    """Seal every seat's answer into a capsule for its puzzle, endorsed by its owner."""
    seats = tuple(sorted(owners.values()))
    capsules = {
        p.index: [
            Capsule(
                label=f"{p.slot}-{owners[p.index]}",
                puzzle=p.index,
                value=sealed[p.index],
                endorsers=[owners[p.index]],
            )
        ]
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
    )


def illegal_reason(state: GameState, seat: str, action: Action) -> str | None:
    """Why ``action`` is illegal for ``seat`` now, or None when it is legal."""
    if action.kind == "pass":
        return None
    if action.kind == "verify":
        if action.target not in state.puzzles:
            return "bad_target"
        if state.owners[action.target] == seat:
            return "verify_own_puzzle"
        if state.coins[seat] <= 0:
            return "no_coins"
        return None
    if action.kind == "volunteer":
        password = action.password or {}
        if set(password) != set(state.puzzles):
            return "incomplete_password"
        for k, label in password.items():
            if state.find_capsule(k, label) is None:
                return "missing_capsule"
        return None
    return "unknown_action"


def _verify(state: GameState, seat: str, puzzle: int, answer: int) -> VerificationReport:
    state.coins[seat] -= 1
    for capsule in state.capsules[puzzle]:
        if capsule.value == answer:
            if seat not in capsule.endorsers:
                capsule.endorsers.append(seat)
            return VerificationReport(seat, puzzle, capsule.label, created=False)
    existing = {c.label for c in state.capsules[puzzle]}
    label, n = f"Q{puzzle}-{seat}", 2
    while label in existing:
        label, n = f"Q{puzzle}-{seat}{n}", n + 1
    state.capsules[puzzle].append(Capsule(label=label, puzzle=puzzle, value=answer, endorsers=[seat]))
    return VerificationReport(seat, puzzle, label, created=True)


def password_correct(state: GameState, password: dict[int, str]) -> bool:
    """Numeric check of every slot of a (legal) password."""
    return all(state.find_capsule(k, label).value == state.puzzles[k].answer for k, label in password.items())


def resolve_round(
    state: GameState,
    resolved: dict[str, Action],
    verify_answers: dict[str, int],
    rng: random.Random,
    game: int = 1,
) -> RoundReport:
    """Apply one round of already-legal actions (seat → action) and return the public report.

    ``verify_answers`` holds each verifier's private answer to its target puzzle.
    """
    state.round += 1
    verifications = tuple(
        _verify(state, seat, resolved[seat].target, verify_answers[seat])  # type: ignore[arg-type]
        for seat in state.seats
        if seat in resolved and resolved[seat].kind == "verify"
    )
    volunteers = tuple(s for s in state.seats if s in resolved and resolved[s].kind == "volunteer")
    chosen: str | None = None
    password: dict[int, str] | None = None
    correct: bool | None = None
    deaths: list[tuple[str, str]] = []
    if volunteers:
        chosen = volunteers[rng.randrange(len(volunteers))]
        password = resolved[chosen].password
        correct = password_correct(state, password)  # type: ignore[arg-type]
        if correct:
            state.escaped = True
            state.escape_round = state.round
        else:
            deaths.append((chosen, WRONG_PASSWORD))
    else:
        victim = state.alive[rng.randrange(len(state.alive))]
        deaths.append((victim, NO_VOLUNTEER))
    for seat, cause in deaths:
        state.alive.remove(seat)
        state.deaths.append((seat, cause, state.round))
    report = RoundReport(
        game=game,
        round=state.round,
        actions={s: resolved[s].describe() for s in state.seats if s in resolved},
        verifications=verifications,
        volunteers=volunteers,
        chosen_volunteer=chosen,
        password=password,
        password_correct=correct,
        deaths=tuple(deaths),
        escaped=state.escaped,
    )
    state.reports.append(report)
    return report
