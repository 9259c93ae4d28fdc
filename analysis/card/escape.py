"""Escape-room figures of the card that the trust analysis has no table for: breakage, recovery and the
protective share, computed from the tidy game rows of :func:`analysis.escape_room.loader.load_trust_data`.

- **breakage**: verifications in the game right after the first strike minus those in the game right before
  it, per session (cluster), on the first schedule with memory whose first strike has a game before it
  (``mid2strike`` in the battery); cluster-bootstrap interval of the mean difference.
- **recovery**: games after the strike block (the first failure game and the failures right after it) until
  the per-game volume (verifications per game, mean over sessions) is back at or below the upper bound of
  the anchor's interval (the anchor's point value when it has no interval); 1 = the first game after the
  block. Bootstrap over sessions; a curve that never comes back is reported as not recovered within the
  games played (no estimate).
- **protective share**: protective verifications ÷ all verifications of the subject's escape-room games
  (the trust analysis's definition of a protective verification), clusters = sessions (games when
  memoryless).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.card.figures import Figure, from_values, not_run, unavailable
from analysis.stats import cluster_bootstrap_mean, cluster_bootstrap_ratio, percentile_interval

PREFERRED_BREAKAGE = ("mid2strike", "recur", "2strike", "3strike", "1strike")


def _clusters(games: pd.DataFrame) -> pd.Series:
    memoryless = games["memory"].astype(str) == "none"
    session = games["run_id"].astype(str) + "/" + games["session"].astype(str)
    return session.where(~memoryless, session + "/" + games["game"].astype(str))


def _strike_schedule(games: pd.DataFrame) -> tuple[str, pd.DataFrame, int] | None:
    """The first schedule (battery order) whose sessions have a D-correct game before the first strike."""
    memory = games[games["memory"].astype(str) != "none"]
    for schedule in (*PREFERRED_BREAKAGE, *sorted(set(memory["schedule"].astype(str)))):
        sub = memory[memory["schedule"].astype(str) == schedule]
        if sub.empty:
            continue
        wrong = sub.loc[~sub["d_correct"].astype(bool), "game"]
        if wrong.empty:
            continue
        first = int(wrong.min())
        if first > int(sub["game"].min()):
            return schedule, sub, first
    return None


def _matrix(sub: pd.DataFrame) -> pd.DataFrame:
    """Verifications per game: one row per session, one column per game number."""
    key = sub["run_id"].astype(str) + "/" + sub["session"].astype(str)
    return sub.assign(cluster=key).pivot_table(
        index="cluster", columns="game", values="verifications", aggfunc="sum"
    )


def breakage(games: pd.DataFrame, *, resamples: int, seed: int) -> Figure:
    label = "breakage: Δ verifications/game after the first strike"
    found = _strike_schedule(games)
    if found is None:
        return not_run("breakage", label, "no schedule with memory and a game before its first strike")
    schedule, sub, first = found
    m = _matrix(sub)
    if first + 1 not in m.columns or first - 1 not in m.columns:
        return unavailable("breakage", label, f"{schedule}: no game after the first strike (game {first})")
    diff = (m[first + 1] - m[first - 1]).dropna()
    iv = cluster_bootstrap_mean(diff.to_numpy(), diff.index.to_numpy(), n_resamples=resamples, seed=seed)
    note = f"{schedule}: game {first + 1} − game {first - 1}, {len(diff)} sessions"
    if iv.note:
        note += f"; {iv.note}"
    return from_values("breakage", label, iv.estimate, iv.low, iv.high, n=len(diff), note=note)


def _first_back(curve: np.ndarray, bound: float) -> float:
    hits = np.nonzero(curve <= bound + 1e-12)[0]
    return float(hits[0] + 1) if hits.size else math.nan


def recovery(games: pd.DataFrame, anchor: float, anchor_high: float, *, resamples: int, seed: int) -> Figure:
    label = "recovery: games until volume is back within the anchor's interval"
    if math.isnan(anchor):
        return not_run("recovery", label, "no anchor (memoryless runs or a published anchor)")
    bound = anchor if math.isnan(anchor_high) else anchor_high
    found = _strike_schedule(games)
    if found is None:
        return not_run("recovery", label, "no schedule with memory and a strike")
    schedule, sub, first = found
    m = _matrix(sub)
    d_by_game = sub.groupby("game")["d_correct"].apply(lambda s: bool(s.astype(bool).all()))
    last = first
    while last + 1 in d_by_game.index and not d_by_game[last + 1]:
        last += 1
    after = [g for g in m.columns if g > last]
    if not after:
        return unavailable(
            "recovery", label, f"{schedule}: no game after the strike block (games {first}–{last})"
        )
    values = m[after].to_numpy(dtype=float)
    values = values[~np.isnan(values).any(axis=1)]
    n = values.shape[0]
    if n == 0:
        return unavailable("recovery", label, f"{schedule}: no complete session after the strike")
    est = _first_back(values.mean(axis=0), bound)
    note = f"{schedule}: after games {first}–{last}; bound {bound:.2f} verifications/game; {n} sessions"
    if math.isnan(est):
        return Figure(
            "recovery", label, n=n, status="not available",
            note=f"not back within the {len(after)} games played ({note})",
        )  # fmt: skip
    if n < 3:
        return from_values("recovery", label, est, n=n, note=f"{note}; fewer than 3 sessions", digits=0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    samples = np.array([_first_back(values[idx].mean(axis=0), bound) for idx in draws])
    censored = float(np.isnan(samples).mean())
    samples = np.where(np.isnan(samples), len(after) + 1, samples)  # not back: counted past the last game
    low, high = percentile_interval(samples)
    if censored:
        note += f"; {censored:.0%} of resamples not back within {len(after)} games (upper bound censored)"
    return from_values("recovery", label, est, low, high, n=n, note=note, underpowered=False, digits=0)


def protective_share(games: pd.DataFrame, *, resamples: int, seed: int) -> Figure:
    label = "protective share of verifications"
    if games.empty:
        return not_run("protective_share", label)
    clusters = _clusters(games)
    per = pd.DataFrame({"c": clusters, "p": games["protective_verifications"], "v": games["verifications"]})
    sums = per.groupby("c")[["p", "v"]].sum()
    iv = cluster_bootstrap_ratio(sums["p"].to_numpy(), sums["v"].to_numpy(), n_resamples=resamples, seed=seed)
    note = f"{int(sums['v'].sum())} verifications; trust-analysis definition"
    if iv.note:
        note += f"; {iv.note}"
    return from_values(
        "protective_share", label, iv.estimate, iv.low, iv.high, n=int(sums["v"].sum()), note=note
    )
