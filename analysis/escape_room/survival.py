"""Kaplan–Meier survival of agent-games over rounds, with cluster-bootstrap percentile bands.

Time is ``rounds_alive`` (rounds whose start the seat saw alive); a death is the event, surviving to the
game's end is censoring. Bands resample whole clusters (game when memoryless, run otherwise), vectorised:
per-cluster event and at-risk counts at each time are combined with one weight-matrix product.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.escape_room.loader import TrustData
from analysis.escape_room.measures import cell_seed, cluster_ids
from analysis.escape_room.schema import CELL_KEYS
from analysis.stats import MIN_CLUSTERS, bootstrap_totals


def _km(deaths: np.ndarray, at_risk: np.ndarray) -> np.ndarray:
    """Survival at each time from (…, T) death and at-risk counts."""
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(at_risk > 0, deaths / np.where(at_risk > 0, at_risk, 1), 0.0)
    return np.cumprod(1.0 - hazard, axis=-1)


def kaplan_meier(
    times: np.ndarray,
    events: np.ndarray,
    clusters: np.ndarray,
    *,
    n_resamples: int = 5000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """KM curve with a percentile cluster-bootstrap band.

    Args:
        times: Rounds survived (>= 0, integers) per agent-game.
        events: 1 when the agent died, 0 when censored.
        clusters: Resampling cluster of each agent-game.
        n_resamples: Bootstrap resamples.
        seed: Seed or Generator.
        level: Band coverage.

    Returns:
        Columns ``time, at_risk, deaths, survival, low, high`` (low/high empty with < 3 clusters).
    """
    t = np.asarray(times, dtype=int)
    e = np.asarray(events, dtype=float)
    if t.size == 0:
        return pd.DataFrame(columns=["time", "at_risk", "deaths", "survival", "low", "high"])
    grid = np.arange(1, int(t.max()) + 1)
    inv = pd.factorize(np.asarray(clusters))[0]
    k = int(inv.max()) + 1
    # per-cluster deaths at each time and number at risk (time >= grid value)
    d = np.zeros((k, grid.size))
    np.add.at(d, (inv[e > 0], t[e > 0] - 1), 1.0)
    ends = np.zeros((k, grid.size + 1))
    np.add.at(ends, (inv, t), 1.0)  # subjects whose time is exactly t leave after t
    at_risk = ends[:, ::-1].cumsum(axis=1)[:, ::-1][:, 1:]
    total_d, total_r = d.sum(0), at_risk.sum(0)
    surv = _km(total_d, total_r)
    low = np.full(grid.size, np.nan)
    high = np.full(grid.size, np.nan)
    if k >= MIN_CLUSTERS:
        totals = bootstrap_totals(np.hstack([d, at_risk]), n_resamples, seed)
        boot = _km(totals[:, : grid.size], totals[:, grid.size :])
        alpha = (1 - level) / 2
        low, high = np.quantile(boot, [alpha, 1 - alpha], axis=0)
    return pd.DataFrame(
        {"time": grid, "at_risk": total_r.astype(int), "deaths": total_d.astype(int), "survival": surv,
         "low": low, "high": high}
    )  # fmt: skip


def survival_curves(
    data: TrustData, *, n_resamples: int = 5000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """KM curve per cell over the agents under test; ``note`` says when a band is missing."""
    a = data.agent_games[~data.agent_games["is_partner"]]
    frames = []
    for key_values, grp in a.groupby(list(CELL_KEYS), sort=True):
        keys = dict(zip(CELL_KEYS, (str(v) for v in key_values), strict=True))
        cl = cluster_ids(grp, keys["memory"] == "none").to_numpy()
        curve = kaplan_meier(
            grp["rounds_alive"].to_numpy(),
            (~grp["survived"]).to_numpy(),
            cl,
            n_resamples=n_resamples,
            seed=cell_seed(seed, keys, "km"),
            level=level,
        )
        n_cl = len(set(cl))
        curve["note"] = "" if n_cl >= MIN_CLUSTERS else f"{n_cl} clusters (< {MIN_CLUSTERS}); no band"
        for k, v in reversed(keys.items()):
            curve.insert(0, k, v)
        frames.append(curve)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
