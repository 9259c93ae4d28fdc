"""A brute-force evaluator of the yardstick's model on the engine's own rules, for small games.

Independent of :mod:`analysis.yardstick.model`: every world (truth vector of the originals) gets its own
engine game (:mod:`games.escape_room.rules`); a round is played with ``resolve_round`` for every draw of the
volunteer or the eliminated seat; children are grouped by the public announcement (an information set of
the seat), and the seat's value is the maximum over its legal moves of the expectation over worlds,
teammates' mixed moves and draws (an expectimax over information sets, no public-state abstraction). The
teammates' beliefs are their views restricted to the worlds the announcements allow, with the model's stated
rules (a seat's own original right unless a verification showed it wrong; verdicts before passwords; a fact
of probability 0 ignored); their policy is the reference rule or pass.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass

from games.escape_room.rules import GameState, new_game, resolve_round
from games.escape_room.types import Action, Puzzle, RoundReport

PUZZLES = [Puzzle(k, f"puzzle {k}", 10 * k) for k in (1, 2, 3, 4)]
TESTED = ("A", "B", "C")


def bit(k: int) -> int:
    return 1 << (k - 1)


def engine_game(world: int, owners: dict[int, str], coins: int, max_rounds: int) -> GameState:
    """The engine game of ``world``: an original is right when its bit is set, else it holds a wrong number."""
    sealed = {p.index: p.answer if world & bit(p.index) else p.answer + 1 for p in PUZZLES}
    return new_game(PUZZLES, owners, sealed, coins, max_rounds)


@dataclass
class Branch:
    """One world's game in an information set, with its (unnormalised) probability."""

    world: int
    weight: float
    state: GameState


def facts(
    history: Sequence[RoundReport], owners: dict[int, str]
) -> tuple[dict[int, bool], list[tuple[int, bool]]]:
    """(verdict per puzzle: the first verification by a seat other than its owner; passwords: (originals
    named, right)) from the announcements."""
    verdicts: dict[int, bool] = {}
    passwords = []
    for report in history:
        for v in report.verifications:
            owner = owners[v.puzzle]
            if v.seat != owner and v.puzzle not in verdicts:
                verdicts[v.puzzle] = v.capsule == f"Q{v.puzzle}-{owner}"
        if report.password is not None:
            named = sum(bit(k) for k, label in report.password.items() if label == f"Q{k}-{owners[k]}")
            passwords.append((named, bool(report.password_correct)))
    return verdicts, passwords


def belief(
    view: Sequence[float], own: int, history: Sequence[RoundReport], owners: dict[int, str]
) -> list[float]:
    """A seat's distribution over worlds given the announcements."""
    verdicts, passwords = facts(history, owners)
    weights = list(view)
    if verdicts.get(own) is False:
        weights = [view[w | bit(own)] if not w & bit(own) else 0.0 for w in range(16)]
    rules = [(bit(k), right) for k, right in sorted(verdicts.items())] + passwords
    for need, right in rules:
        kept = [p if ((w & need) == need) == right else 0.0 for w, p in enumerate(weights)]
        if sum(kept) > 0:
            weights = kept
    total = sum(weights)
    return [p / total for p in weights]


def verified(state: GameState, k: int) -> bool:
    return any(e != state.owners[k] for c in state.capsules[k] for e in c.endorsers)


def best_password(state: GameState, seat: str) -> dict[int, str]:
    """Per puzzle a capsule a verifier (a seat other than the owner) endorsed, else the original (a seat
    trusts its own unless a verifier showed it wrong)."""
    out = {}
    for k, capsules in state.capsules.items():
        vouched = [c for c in capsules if any(e != state.owners[k] for e in c.endorsers)]
        out[k] = (vouched[0] if vouched else capsules[0]).label
    return out


def reference_moves(state: GameState, seat: str, probs: list[float]) -> list[tuple[Action, float]]:
    """The reference rule: verify the unverified puzzle (not its own) with the largest (1 − p) × coins if that
    exceeds 1 (ties equally likely), else volunteer."""
    coins = state.coins[seat]
    losses = {}
    for k in state.puzzles:
        if state.owners[k] == seat or verified(state, k):
            continue
        p = round(sum(q for w, q in enumerate(probs) if w & bit(k)), 12)
        if p < 1:
            losses[k] = (1 - p) * coins
    worst = max(losses.values(), default=0.0)
    if coins > 0 and worst > 1:
        targets = [k for k, loss in sorted(losses.items()) if loss == worst]
        return [(Action.verify(k), 1 / len(targets)) for k in targets]
    return [(Action.volunteer(best_password(state, seat)), 1.0)]


class BruteForce:
    """The seat's expectimax over information sets (``views``: each tested seat's view at the game start)."""

    def __init__(
        self, seat: str, owners: dict[int, str], views: dict[str, Sequence[float]], variant: str
    ) -> None:
        self.seat, self.owners, self.views, self.variant = seat, owners, views, variant
        self.own = {s: k for k, s in owners.items()}

    def moves(self, state: GameState) -> dict[str, Action]:
        out = {"pass": Action.pass_(), "volunteer": Action.volunteer(best_password(state, self.seat))}
        if state.coins[self.seat] > 0:
            out.update({f"verify:{k}": Action.verify(k) for k in state.puzzles})
        return out

    def teammates(
        self, state: GameState, history: list[RoundReport]
    ) -> list[tuple[dict[str, Action], float]]:
        profiles: list[tuple[dict[str, Action], float]] = [({}, 1.0)]
        for seat in TESTED:
            if seat == self.seat or seat not in state.alive:
                continue
            if self.variant == "self_reliant":
                mixed = [(Action.pass_(), 1.0)]
            else:
                mixed = reference_moves(
                    state, seat, belief(self.views[seat], self.own[seat], history, self.owners)
                )
            profiles = [({**moves, seat: a}, p * q) for moves, p in profiles for a, q in mixed]
        return profiles

    def q(self, branches: list[Branch], history: list[RoundReport], action: Action) -> float:
        """Expected score (times the branches' total weight) of ``action`` now, then the best response."""
        state0 = branches[0].state
        children: dict[str, list[Branch]] = {}
        total = 0.0
        for teammates, p_moves in self.teammates(state0, history):
            moves = {**teammates, self.seat: action}
            volunteers = [s for s in state0.seats if s in moves and moves[s].kind == "volunteer"]
            options = volunteers or list(state0.alive)
            for b in branches:
                for pick in options:
                    state = copy.deepcopy(b.state)
                    answers = {
                        s: state.puzzles[m.target].answer for s, m in moves.items() if m.kind == "verify"
                    }
                    report = resolve_round(
                        state, moves, answers, random.Random(0), draw=lambda _k, _o, c=pick: c
                    )
                    weight = b.weight * p_moves / len(options)
                    if state.over or self.seat not in state.alive:
                        total += weight * state.score(self.seat)
                    else:
                        children.setdefault(report.text(), []).append(Branch(b.world, weight, state))
        for group in children.values():
            report = group[0].state.reports[-1]
            total += self.value(group, [*history, report])
        return total

    def value(self, branches: list[Branch], history: list[RoundReport]) -> float:
        """The best response's expected score times the branches' total weight."""
        return max(self.q(branches, history, a) for a in self.moves(branches[0].state).values())

    def action_values(self, branches: list[Branch], history: list[RoundReport]) -> dict[str, float]:
        """Every legal action's expected score at the information set ``branches``."""
        total = sum(b.weight for b in branches)
        return {
            name: self.q(branches, history, a) / total for name, a in self.moves(branches[0].state).items()
        }
