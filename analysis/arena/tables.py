"""Arena tables with cluster-bootstrap intervals (cluster = match)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.stats import cluster_bootstrap_ratio

MEASURES = {
    # name: (numerator, denominator) of per-match sums
    "payoff_per_round": ("payoff", "rounds"),
    "cooperation": ("coop", "rounds"),
    "mutual_cooperation": ("mutual", "rounds"),
    "retaliation": ("ret_num", "ret_den"),
    "forgiveness": ("for_num", "for_den"),
    "first_defection": ("first_defection_sum", "defected"),
    "defected_share": ("defected", "one"),
}


def _rng(seed: int, key: Sequence[object]) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("|".join(map(str, key)).encode())])


def measure_table(per_match: pd.DataFrame, keys: Sequence[str], n_resamples: int, seed: int) -> pd.DataFrame:
    """One row per group: matches, rounds, and every measure with its 95% cluster-bootstrap interval.

    ``first_defection`` averages over matches in which the player defected (``defected_share`` says how many).
    """
    rows = []
    pm = per_match.assign(one=1.0)
    for key, g in pm.groupby(list(keys), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        row["matches"] = len(g)
        row["rounds"] = int(g["rounds"].sum())
        for name, (num, den) in MEASURES.items():
            iv = cluster_bootstrap_ratio(
                g[num], g[den], n_resamples=n_resamples, seed=_rng(seed, (*key, name))
            )
            row[name] = iv.estimate
            row[f"{name}_low"] = iv.low
            row[f"{name}_high"] = iv.high
        rows.append(row)
    return pd.DataFrame(rows)


def varying_cells(per_match: pd.DataFrame) -> list[str]:
    """Match-setting columns (temptation, horizon, noise, identity) that take more than one value."""
    from analysis.arena.measures import CELL_COLUMNS

    return [c for c in CELL_COLUMNS if c in per_match.columns and per_match[c].nunique() > 1]


def tournament_table(per_match: pd.DataFrame, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per player (label and model) and per setting that varies: the measures, ranked by payoff per round
    within each setting (rank 1 = best)."""
    cells = varying_cells(per_match)
    t = measure_table(per_match, [*cells, "player", "model"], n_resamples, seed)
    t = t.sort_values([*cells, "payoff_per_round"], ascending=[True] * len(cells) + [False], kind="stable")
    t = t.reset_index(drop=True)
    rank = t.groupby(cells).cumcount() + 1 if cells else pd.Series(np.arange(1, len(t) + 1))
    t.insert(0, "rank", rank.to_numpy())
    return t


def payoff_matrix(per_match: pd.DataFrame) -> pd.DataFrame:
    """Mean payoff per round of the row player against the column opponent."""
    g = per_match.groupby(["player", "opponent"])[["payoff", "rounds"]].sum()
    return (g["payoff"] / g["rounds"]).unstack("opponent")
