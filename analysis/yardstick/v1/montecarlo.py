"""``v1`` (kept only for the ``--model v1`` comparison): Monte Carlo check of the yardstick's expected values:
simulate the model's random events instead of summing over them.

Each simulated game draws the truth of the uncertain capsules from the state's joint distribution and, in
every round the seat does not volunteer, whether the elimination hits it (uniformly among the alive seats;
in the ``team`` variant a verification round is not charged it). The seat takes the given first action,
then follows the model's policy: in each later state the action of highest expected value, where a state
knows the truths that the seat's own verifications revealed. The mean score estimates the action's expected
value; :func:`simulate` returns it with its standard error.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.yardstick.v1.model import State, action_values, best_action, given


def _play(
    state: State,
    action: str,
    truth: np.ndarray,
    rng: np.random.Generator,
    variant: str,
    named: tuple[int, ...] | None,
) -> np.ndarray:
    """Scores of the simulated games ``truth`` (rows: games; columns: the state's uncertain capsules) when
    the seat takes ``action`` now and plays the model's policy afterwards."""
    n = truth.shape[0]
    if action == "volunteer":
        cols = [state.uncertain.index(k) for k in (state.uncertain if named is None else named)]
        ok = truth[:, cols].all(axis=1) if cols else np.ones(n, dtype=bool)
        return np.where(ok, float(state.coins), 0.0)
    verify = action.startswith("verify:")
    survives = np.ones(n, dtype=bool)
    alive = state.alive
    if not verify or variant == "self_reliant":
        survives = rng.integers(0, alive, size=n) != 0  # nobody volunteered: one alive seat is eliminated
        alive -= 1
    left = state.rounds_left - 1
    scores = np.zeros(n)
    if left < 1 or alive < 1:
        return scores
    coins, joint, uncertain = state.coins, state.joint, state.uncertain
    groups = [(np.ones(n, dtype=bool), joint, uncertain, truth)]
    if verify:
        coins -= 1
        puzzle = int(action.split(":")[1])
        if puzzle in uncertain:  # the verification reveals whether the owner's capsule was right
            bit = uncertain.index(puzzle)
            rest = uncertain[:bit] + uncertain[bit + 1 :]
            others = np.delete(truth, bit, axis=1)
            groups = []
            for value in (1, 0):
                mask = truth[:, bit] == value
                if mask.any():
                    groups.append((mask, given(joint, bit, value)[1], rest, others))
    for mask, cond, unc, tr in groups:
        idx = np.flatnonzero(mask & survives)
        if idx.size == 0:
            continue
        nxt = State(coins, unc, cond, alive, left)
        follow = best_action(action_values(nxt, range(1, 5), variant))
        scores[idx] = _play(nxt, follow, tr[idx], rng, variant, None)
    return scores


def simulate(
    state: State,
    action: str,
    *,
    named: tuple[int, ...] | None = None,
    n: int = 20_000,
    rng: np.random.Generator | int = 0,
    variant: str = "team",
) -> tuple[float, float]:
    """(mean score, standard error) of ``action`` (``pass``, ``volunteer``, ``verify:k``) over ``n`` simulated
    games under the model. ``named``: the uncertain puzzles a volunteer names now (default: all)."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    m = len(state.uncertain)
    masks = gen.choice(len(state.joint), size=n, p=np.asarray(state.joint) / sum(state.joint))
    truth = ((masks[:, None] >> np.arange(m)) & 1).astype(bool) if m else np.zeros((n, 0), dtype=bool)
    scores = _play(state, action, truth, gen, variant, named)
    mean = float(scores.mean())
    se = float(scores.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return mean, se
