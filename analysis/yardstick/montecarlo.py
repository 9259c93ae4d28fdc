"""Monte Carlo check of the yardstick's expected values: simulate the model's random events instead of
summing over them.

Each simulated game draws a world (the truth of the originals) from the seat's view, and in every round the
teammates' moves from their policy (ties drawn), the volunteer who submits or the seat eliminated. The seat
takes the given first action, then its best response's move in each public state it reaches. The mean score
estimates the action's expected value; :func:`simulate` returns it with its standard error. Simulated games
that reach the same public state are played on together (numpy arrays of worlds).
"""

from __future__ import annotations

import math

import numpy as np

from analysis.yardstick.evidence import bit
from analysis.yardstick.model import ALL, PASS, TESTED, VOLUNTEER, WRONG, Move, RoundState, SeatModel


def _move(action: str) -> Move:
    return int(action.split(":")[1]) if action.startswith("verify:") else action


def _play(
    model: SeatModel, state: RoundState, move: Move, worlds: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Scores of the simulated games whose worlds are ``worlds`` when the seat makes ``move`` in ``state``
    and then plays its best response."""
    scores = np.zeros(len(worlds))
    plans = model.plans(state)
    pick = rng.choice(len(plans), size=len(worlds), p=[plan.p for plan in plans])
    last = state.rounds_left <= 1
    alive = sorted(state.alive)
    for i, plan in enumerate(plans):
        idx = np.flatnonzero(pick == i)
        if idx.size == 0:
            continue
        coins = list(plan.coins)
        reveal = plan.reveal
        volunteers = list(plan.volunteers)
        if move in (VOLUNTEER, WRONG):
            volunteers.append(model.seat)
        elif move != PASS:
            coins[TESTED.index(model.seat)] -= 1
            if isinstance(move, int) and model.owners[move] != model.seat:
                reveal |= bit(move)
        reveal &= ~state.verified
        need = ALL & ~state.verified
        w = worlds[idx]
        seen = w & reveal
        right = (w & need) == need
        draw = rng.integers(len(volunteers) if volunteers else len(alive), size=idx.size)
        code = (seen * 2 + right) * 4 + draw
        for c in np.unique(code):
            sub = idx[code == c]
            seen_c, right_c, d = int(c) // 8, bool(int(c) // 4 % 2), int(c) % 4
            verified, truth = state.verified | reveal, state.truth | seen_c
            if volunteers:
                v = volunteers[d]
                wrong = v == model.seat and move == WRONG  # a password naming a capsule known to be wrong
                if right_c and not wrong:
                    scores[sub] = coins[TESTED.index(model.seat)]
                    continue
                dead = v
                failed = state.failed if wrong else state.failed | {need}
            else:
                dead = alive[d]
                failed = state.failed
            if dead == model.seat or last:
                continue
            nxt = model.next_state(state, dead, coins, verified, truth, failed)
            scores[sub] = _play(model, nxt, model.best_move(nxt), worlds[sub], rng)
    return scores


def simulate(
    model: SeatModel, state: RoundState, action: str, *, n: int = 20_000, rng: np.random.Generator | int = 0
) -> tuple[float, float]:
    """(mean score, standard error) of ``action`` (``pass``, ``volunteer``, ``volunteer_wrong``, ``verify:k``)
    over ``n`` simulated games under the model."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    view = np.asarray(model.view(state))
    worlds = gen.choice(len(view), size=n, p=view / view.sum())
    scores = _play(model, state, _move(action), worlds, gen)
    mean = float(scores.mean())
    se = float(scores.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return mean, se
