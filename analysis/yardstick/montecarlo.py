"""Monte Carlo check of the yardstick's expected values: simulate the model's random events instead of
summing over them.

Each simulation draws whether each named capsule is right (independently, with the model's probabilities)
and, in every round the seat does not volunteer, whether the elimination hits it (uniformly among the alive
seats; in the ``team`` variant a verification round is not charged it). The seat takes the given first action, then follows the model's optimal policy (the action of
highest expected value in each later state, which depends only on the coins, the verified puzzles, the
alive count and the rounds left, so its path is fixed as long as the seat lives). The mean score estimates
the action's expected value; :func:`simulate` returns it with its standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from analysis.yardstick.model import State, action_values, best_action


def _policy_path(state: State, first: str, variant: str) -> list[str]:
    """The actions the seat takes, round by round, starting with ``first``, until it volunteers or the game
    ends (the seat surviving every elimination)."""
    path = [first]
    coins, probs = state.coins, list(state.probs)
    alive, left = state.alive, state.rounds_left
    action = first
    while not action.startswith("volunteer"):
        verify = action.startswith("verify:")
        if verify:
            coins -= 1
            probs[int(action.split(":")[1]) - 1] = 1.0
        if not verify or variant == "self_reliant":
            alive -= 1  # the seat survived this round's elimination
        left -= 1
        if left < 1 or alive < 1:
            break
        action = best_action(action_values(State(coins, tuple(probs), alive, left), variant=variant))
        path.append(action)
    return path


def simulate(
    state: State,
    action: str,
    *,
    named: Sequence[float] | None = None,
    n: int = 20_000,
    rng: np.random.Generator | int = 0,
    variant: str = "team",
) -> tuple[float, float]:
    """(mean score, standard error) of ``action`` (``pass``, ``volunteer``, ``verify:k``) over ``n`` simulated
    games under the model. ``named``: the probabilities of the capsules a volunteer names now (default: the
    best ones)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    path = _policy_path(state, action, variant)
    probs = np.asarray(state.probs, dtype=float)
    right = gen.random((n, len(probs))) < probs  # is each puzzle's best capsule right?
    verified = np.zeros(len(probs), dtype=bool)
    coins = state.coins
    alive_now = np.ones(n, dtype=bool)
    score = np.zeros(n)
    alive, left = state.alive, state.rounds_left
    for step, act in enumerate(path):
        if act.startswith("volunteer"):
            if step == 0 and named is not None:
                ok = np.all(gen.random((n, len(named))) < np.asarray(named, dtype=float), axis=1)
            else:
                ok = np.all(right | verified, axis=1)
            score = np.where(alive_now & ok, float(coins), 0.0)
            break
        verify = act.startswith("verify:")
        if verify:
            coins -= 1
            verified[int(act.split(":")[1]) - 1] = True
        if not verify or variant == "self_reliant":
            # nobody volunteered: one of the alive seats is eliminated uniformly at random
            alive_now &= gen.integers(0, alive, size=n) != 0
            alive -= 1
        left -= 1
        if left < 1 or alive < 1:
            break
    mean = float(score.mean())
    se = float(score.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return mean, se
