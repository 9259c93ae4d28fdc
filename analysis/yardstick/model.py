"""The reference model of the yardstick: expected score of each legal action from one seat's point of view.

A model-based yardstick, not the exact optimum of the game. The state that matters to the seat is

- ``coins``: its coins (its score if the team escapes with it alive; a verification costs one coin);
- ``probs``: for each puzzle, the probability that the best capsule the seat can name is right (1 for its
  own puzzle and for a capsule a verifier vouched for, verifiers taken as exact; the owner's Beta
  reliability otherwise), capsules independent;
- ``alive``: seats alive, the seat included: if nobody volunteers, one of them dies uniformly at random;
- ``rounds_left``: rounds left including this one (after the last round the game ends: score 0).

Actions and their risks:

- ``volunteer``: escape with the coins if every named capsule is right, else die (death risk ``1 − Π p``);
- ``pass``: nothing improves and nobody is assumed to volunteer, so the seat faces this round's elimination
  (death risk ``1/alive``) and loses a round;
- ``verify(k)``: pay a coin; puzzle k's best capsule is certainly right from the next round on (an exact
  verifier confirms it or opens the right one); it uses up a round. How a verification round's elimination
  is counted is the model's one free assumption, its **variant**:

  - ``team`` (default): a verification prepares the team's attempt and is not charged the round's
    elimination (the seats under test are copies that share the public state; one who checks is not the one
    left idle). Under it the ``bayes`` agent's rule "verify k when (1 − p_k) × coins exceeds the coin" is
    the optimal first step, so ``bayes`` has regret ≈ 0.
  - ``self_reliant``: the seat counts on nobody: a verification round, like a pass, risks ``1/alive``.

After this round the seat plays on optimally under the same model (a small dynamic programme over coins,
uncertain puzzles, alive seats and rounds left), so every expected value is in **expected score, in coins**:
coins kept × P(escape alive). A death costs all the seat's coins, so coins and survival share one unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

EPS = 1e-9
"""Values closer than this count as a tie (a tied action has regret 0)."""


@dataclass(frozen=True)
class State:
    """One seat's decision state under the model (see the module docstring)."""

    coins: int
    probs: tuple[float, ...]  # per puzzle: P(the best nameable capsule is right)
    alive: int
    rounds_left: int

    def __post_init__(self) -> None:
        if self.alive < 1 or self.rounds_left < 1 or self.coins < 0:
            raise ValueError(f"bad state {self}")
        if any(not 0.0 <= p <= 1.0 for p in self.probs):
            raise ValueError(f"probabilities must be in [0, 1]: {self.probs}")


def _key(probs: Sequence[float]) -> tuple[float, ...]:
    """The uncertain probabilities (p < 1), rounded and sorted: the value depends on nothing else."""
    return tuple(sorted(round(p, 12) for p in probs if p < 1.0))


VARIANTS = ("team", "self_reliant")


def _check(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown model variant {variant!r} (choose from {', '.join(VARIANTS)})")


def _after_verify(alive: int, variant: str) -> tuple[float, int]:
    """(P(the seat survives a verification round), alive seats after it)."""
    if variant == "self_reliant":
        return (alive - 1) / alive, alive - 1
    return 1.0, alive


@lru_cache(maxsize=200_000)
def _value(coins: int, uncertain: tuple[float, ...], alive: int, rounds_left: int, variant: str) -> float:
    """Optimal expected score from a start-of-round state (uncertain: sorted probabilities below 1)."""
    best = coins * math.prod(uncertain)  # volunteer now
    if rounds_left <= 1:
        return best
    if alive > 1:  # pass: survive the elimination
        best = max(best, (alive - 1) / alive * _value(coins, uncertain, alive - 1, rounds_left - 1, variant))
    survive, alive_after = _after_verify(alive, variant)
    if coins > 0 and alive_after >= 1:
        for i, p in enumerate(uncertain):  # verify one uncertain puzzle (equal ones give equal values)
            if i and p == uncertain[i - 1]:
                continue
            rest = uncertain[:i] + uncertain[i + 1 :]
            best = max(best, survive * _value(coins - 1, rest, alive_after, rounds_left - 1, variant))
    return best


def value(state: State, variant: str = "team") -> float:
    """The optimal expected score from ``state`` under the model."""
    _check(variant)
    return _value(state.coins, _key(state.probs), state.alive, state.rounds_left, variant)


def ev_volunteer(state: State, named: Sequence[float] | None = None) -> float:
    """Expected score of volunteering now with the named capsules' probabilities (default: the best)."""
    return state.coins * math.prod(state.probs if named is None else named)


def ev_pass(state: State, variant: str = "team") -> float:
    """Expected score of passing: survive this round's elimination, then play on optimally."""
    _check(variant)
    if state.rounds_left <= 1 or state.alive <= 1:
        return 0.0
    survive = (state.alive - 1) / state.alive
    return survive * _value(state.coins, _key(state.probs), state.alive - 1, state.rounds_left - 1, variant)


def ev_verify(state: State, puzzle: int, variant: str = "team") -> float:
    """Expected score of verifying puzzle ``puzzle`` (0-based index into ``probs``); needs a coin."""
    _check(variant)
    if state.coins < 1:
        raise ValueError("verifying needs a coin")
    survive, alive_after = _after_verify(state.alive, variant)
    if state.rounds_left <= 1 or alive_after < 1:
        return 0.0
    after = list(state.probs)
    after[puzzle] = 1.0
    return survive * _value(state.coins - 1, _key(after), alive_after, state.rounds_left - 1, variant)


def death_risk_pass(state: State) -> float:
    """P(the seat dies this round) when it passes and, as the model assumes, nobody volunteers."""
    return 1.0 / state.alive


def death_risk_volunteer(named: Sequence[float]) -> float:
    """P(the seat dies this round) when it volunteers with capsules right with these probabilities."""
    return 1.0 - math.prod(named)


def action_values(
    state: State, *, can_verify: Sequence[int] | None = None, variant: str = "team"
) -> dict[str, float]:
    """Expected score of every legal action: ``pass``, ``volunteer`` (best password), ``verify:k`` (1-based).

    ``can_verify``: the 1-based puzzles the rules let the seat verify (default: every puzzle when it has a
    coin).
    """
    out = {"pass": ev_pass(state, variant), "volunteer": ev_volunteer(state)}
    if state.coins > 0:
        targets = range(1, len(state.probs) + 1) if can_verify is None else can_verify
        for k in targets:
            out[f"verify:{k}"] = ev_verify(state, k - 1, variant)
    return out


def best_action(values: dict[str, float]) -> str:
    """The first best action in a fixed order: volunteer, pass, then verifications by puzzle."""
    top = max(values.values())
    order = ["volunteer", "pass", *sorted(k for k in values if k.startswith("verify:"))]
    return next(a for a in order if values[a] >= top - EPS)
