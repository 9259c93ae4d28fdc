"""The yardstick's first reference model (``v1``, superseded by :mod:`analysis.yardstick.model`; kept only for the
side-by-side comparison of docs/yardstick.md, ``--model v1``): expected score of each legal action from one
seat's point of view, other seats not modelled.

A model-based yardstick, not the exact optimum of the game. The state that matters to the seat is

- ``coins``: its coins (its score if the team escapes with it alive; a verification costs one coin);
- the **uncertain puzzles**: another seat's puzzle whose only capsule is its owner's, unendorsed by anyone
  else. Every other puzzle is certain: the seat's own (it trusts its answer) and any puzzle a verifier
  vouched for (verifiers are taken as exact). The uncertain capsules are right independently, each with its
  owner's Beta reliability at the start of the game, conditioned exactly on what this game showed: a failed
  password means the uncertain capsules it named were not all right (``joint`` holds that distribution);
- ``alive``: seats alive, the seat included: if nobody volunteers, one of them dies uniformly at random;
- ``rounds_left``: rounds left including this one (after the last round the game ends: score 0).

Actions and their risks:

- ``volunteer``: escape with the coins if every named capsule is right, else die (death risk
  ``1 − P(all right)``);
- ``pass``: nothing improves and nobody is assumed to volunteer, so the seat faces this round's elimination
  (death risk ``1/alive``) and loses a round;
- ``verify(k)``: pay a coin; puzzle k becomes certain (the verifier confirms the capsule or opens the right
  one) and the seat learns whether the owner's capsule was right; it uses up a round. How a verification
  round's elimination is counted is the model's one free assumption, its **variant**:

  - ``team`` (default): a verification prepares the team's attempt and is not charged the round's
    elimination (the seats under test are copies sharing the public state; the one who checks is not the
    one left idle). Under it the ``bayes`` agent's rule "verify k when (1 − p_k) × coins exceeds the coin"
    is the optimal first step whenever a round is left after this one, so ``bayes`` has regret 0 wherever
    its beliefs equal the model's.
  - ``self_reliant``: the seat counts on nobody: a verification round, like a pass, risks ``1/alive``.

After this round the seat plays on optimally under the same model (a small dynamic programme over coins,
the distribution of the uncertain capsules, alive seats and rounds left), so every expected value is in
**expected score, in coins**: coins kept × P(escape alive). Death costs all the seat's coins, so coins and
survival share one unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

EPS = 1e-9
"""Values closer than this count as a tie (a tied action has regret 0)."""
VARIANTS = ("team", "self_reliant")

Joint = tuple[float, ...]
"""P(truth vector) of the uncertain capsules: index ``mask``, bit ``i`` set = the i-th uncertain capsule is
right; length ``2**m``."""


def independent(probs: Sequence[float]) -> Joint:
    """The joint distribution of independent capsules right with these probabilities."""
    m = len(probs)
    return tuple(
        math.prod(p if mask >> i & 1 else 1.0 - p for i, p in enumerate(probs)) for mask in range(2**m)
    )


def condition_not_all(joint: Joint, bits: Iterable[int]) -> Joint:
    """``joint`` given that the capsules at ``bits`` were not all right (a failed password); an impossible
    condition (probability 0) leaves ``joint`` as it is."""
    need = sum(1 << b for b in bits)
    kept = [0.0 if (mask & need) == need else p for mask, p in enumerate(joint)]
    total = sum(kept)
    return joint if total <= 0 else tuple(p / total for p in kept)


def marginal(joint: Joint, bit: int) -> float:
    """P(the capsule at ``bit`` is right)."""
    return sum(p for mask, p in enumerate(joint) if mask >> bit & 1)


def p_all_right(joint: Joint, bits: Iterable[int] | None = None) -> float:
    """P(every capsule at ``bits`` (default: all) is right)."""
    m = int(math.log2(len(joint)))
    need = sum(1 << b for b in (range(m) if bits is None else bits))
    return sum(p for mask, p in enumerate(joint) if (mask & need) == need)


def given(joint: Joint, bit: int, value: int) -> tuple[float, Joint]:
    """(P(the capsule at ``bit`` has truth ``value``), the joint of the other capsules given it); the joint is
    empty when that probability is 0."""
    atoms = [(mask, p) for mask, p in enumerate(joint) if (mask >> bit & 1) == value]
    total = sum(p for _, p in atoms)
    if total <= 0:
        return 0.0, ()
    rest = [0.0] * (len(joint) // 2)
    for mask, p in atoms:
        low, high = mask & ((1 << bit) - 1), mask >> (bit + 1)
        rest[low | high << bit] += p / total
    return total, tuple(round(p, 12) for p in rest)


def reveal(joint: Joint, bit: int) -> list[tuple[float, Joint]]:
    """[(P(outcome), joint of the other capsules given it)] for the capsule at ``bit`` right, then wrong
    (outcomes of probability 0 left out)."""
    return [(p, rest) for p, rest in (given(joint, bit, 1), given(joint, bit, 0)) if p > 0]


@dataclass(frozen=True)
class State:
    """One seat's decision state: ``uncertain`` names the puzzles (1-based) of the bits of ``joint``."""

    coins: int
    uncertain: tuple[int, ...]
    joint: Joint
    alive: int
    rounds_left: int

    def __post_init__(self) -> None:
        if self.alive < 1 or self.rounds_left < 1 or self.coins < 0:
            raise ValueError(f"bad state {self}")
        if len(self.joint) != 2 ** len(self.uncertain) or abs(sum(self.joint) - 1.0) > 1e-6:
            raise ValueError(f"joint must be a distribution over 2**{len(self.uncertain)} truth vectors")

    @classmethod
    def of(
        cls,
        coins: int,
        probs: dict[int, float],
        alive: int,
        rounds_left: int,
        failed: Iterable[Iterable[int]] = (),
    ) -> State:
        """From each puzzle's P(right) (1 = certain) and the failed passwords' uncertain puzzles."""
        uncertain = tuple(sorted(k for k, p in probs.items() if p < 1.0))
        joint = independent([probs[k] for k in uncertain])
        for puzzles in failed:
            joint = condition_not_all(joint, [uncertain.index(k) for k in puzzles])
        return cls(coins, uncertain, joint, alive, rounds_left)

    def prob(self, puzzle: int) -> float:
        """P(the puzzle's best capsule is right)."""
        if puzzle not in self.uncertain:
            return 1.0
        return marginal(self.joint, self.uncertain.index(puzzle))


def _check(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown model variant {variant!r} (choose from {', '.join(VARIANTS)})")


def _after_verify(alive: int, variant: str) -> tuple[float, int]:
    """(P(the seat survives a verification round), alive seats after it)."""
    if variant == "self_reliant":
        return (alive - 1) / alive, alive - 1
    return 1.0, alive


def _round(joint: Joint) -> Joint:
    return tuple(round(p, 12) for p in joint)


@lru_cache(maxsize=200_000)
def _value(coins: int, joint: Joint, alive: int, rounds_left: int, variant: str) -> float:
    """Optimal expected score from a start-of-round state."""
    best = coins * joint[-1]  # volunteer now: every uncertain capsule right (the all-ones mask)
    if rounds_left <= 1:
        return best
    if alive > 1:  # pass: survive the elimination
        best = max(best, (alive - 1) / alive * _value(coins, joint, alive - 1, rounds_left - 1, variant))
    if coins > 0:
        for bit in range(int(math.log2(len(joint)))):
            best = max(best, _verify(coins, joint, alive, rounds_left, variant, bit))
    return best


@lru_cache(maxsize=200_000)
def _verify(coins: int, joint: Joint, alive: int, rounds_left: int, variant: str, bit: int | None) -> float:
    """Expected score of verifying the uncertain capsule ``bit`` (None: a certain puzzle, a wasted coin)."""
    survive, alive_after = _after_verify(alive, variant)
    if rounds_left <= 1 or alive_after < 1:
        return 0.0
    if bit is None:
        return survive * _value(coins - 1, joint, alive_after, rounds_left - 1, variant)
    total = 0.0
    for p, rest in reveal(joint, bit):
        total += p * _value(coins - 1, rest, alive_after, rounds_left - 1, variant)
    return survive * total


def value(state: State, variant: str = "team") -> float:
    """The optimal expected score from ``state`` under the model."""
    _check(variant)
    return _value(state.coins, _round(state.joint), state.alive, state.rounds_left, variant)


def ev_volunteer(state: State, named: Iterable[int] | None = None, *, wrong: bool = False) -> float:
    """Expected score of volunteering now naming the uncertain capsules of puzzles ``named`` (default: all
    of them, the best password) and certain ones elsewhere; ``wrong``: it names a capsule known to be wrong."""
    if wrong:
        return 0.0
    bits = None if named is None else [state.uncertain.index(k) for k in named]
    return state.coins * p_all_right(state.joint, bits)


def ev_pass(state: State, variant: str = "team") -> float:
    """Expected score of passing: survive this round's elimination, then play on optimally."""
    _check(variant)
    if state.rounds_left <= 1 or state.alive <= 1:
        return 0.0
    survive = (state.alive - 1) / state.alive
    return survive * _value(state.coins, _round(state.joint), state.alive - 1, state.rounds_left - 1, variant)


def ev_verify(state: State, puzzle: int, variant: str = "team") -> float:
    """Expected score of verifying ``puzzle`` (1-based); needs a coin."""
    _check(variant)
    if state.coins < 1:
        raise ValueError("verifying needs a coin")
    bit = state.uncertain.index(puzzle) if puzzle in state.uncertain else None
    return _verify(state.coins, _round(state.joint), state.alive, state.rounds_left, variant, bit)


def death_risk_pass(state: State) -> float:
    """P(the seat dies this round) when it passes and, as the model assumes, nobody volunteers."""
    return 1.0 / state.alive


def death_risk_volunteer(state: State, named: Iterable[int] | None = None, *, wrong: bool = False) -> float:
    """P(the seat dies this round) when it volunteers naming these uncertain capsules (default: all)."""
    if wrong:
        return 1.0
    bits = None if named is None else [state.uncertain.index(k) for k in named]
    return 1.0 - p_all_right(state.joint, bits)


def action_values(state: State, targets: Sequence[int], variant: str = "team") -> dict[str, float]:
    """Expected score of every legal action: ``pass``, ``volunteer`` (the best password) and ``verify:k`` for
    each puzzle in ``targets`` (the puzzles the rules let the seat verify) when it has a coin."""
    out = {"pass": ev_pass(state, variant), "volunteer": ev_volunteer(state)}
    if state.coins > 0:
        for k in targets:
            out[f"verify:{k}"] = ev_verify(state, k, variant)
    return out


def best_action(values: dict[str, float]) -> str:
    """The first best action in a fixed order: volunteer, pass, then verifications by puzzle."""
    top = max(values.values())
    order = ["volunteer", "pass", *sorted(k for k in values if k.startswith("verify:"))]
    return next(a for a in order if values[a] >= top - EPS)
