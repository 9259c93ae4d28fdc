"""Arena tables with cluster-bootstrap intervals (cluster = match)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.stats import MIN_CLUSTERS, RatioInput, cluster_bootstrap_ratio

MIN_MATCHES = 10
"""An entry (player × model within a setting) needs at least this many matches to be ranked: fewer are
listed with their numbers, flagged ``underpowered`` and left unranked (``--min-matches`` changes it)."""

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
        row["note"] = (
            f"{len(g)} match{'es' if len(g) != 1 else ''} (< {MIN_CLUSTERS}): no intervals"
            if len(g) < MIN_CLUSTERS
            else ""
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _payoff_samples(g: pd.DataFrame, key: tuple, n_resamples: int, seed: int) -> np.ndarray:
    """The resampled payoffs per round behind the entry's interval (same generator, same draws)."""
    num, den = MEASURES["payoff_per_round"]
    cell = RatioInput.of(g[num], g[den])
    return cell.samples(n_resamples, _rng(seed, (*key, "payoff_per_round")))


def _rank_intervals(samples: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of each entry's rank (1 = best) over resamples; entries resampled independently."""
    ranks = (-samples).argsort(axis=1, kind="stable").argsort(axis=1, kind="stable") + 1
    alpha = (1 - level) / 2
    low = np.floor(np.quantile(ranks, alpha, axis=0))
    high = np.ceil(np.quantile(ranks, 1 - alpha, axis=0))
    return low.astype(int), high.astype(int)


def varying_cells(per_match: pd.DataFrame) -> list[str]:
    """Match-setting columns (temptation, horizon, noise, identity) that take more than one value."""
    from analysis.arena.measures import CELL_COLUMNS

    return [c for c in CELL_COLUMNS if c in per_match.columns and per_match[c].nunique() > 1]


def tournament_table(
    per_match: pd.DataFrame, n_resamples: int = 1000, seed: int = 0, min_matches: int = MIN_MATCHES
) -> pd.DataFrame:
    """Per player (label and model) and per setting that varies: the measures, ranked by payoff per round
    within each setting (rank 1 = best) among entries with at least ``min_matches`` matches.

    ``rank_low``/``rank_high``: 95% percentile interval of the rank when every ranked entry's matches are
    resampled (needs 3+ matches per entry). Entries with fewer matches are kept, after the ranked ones,
    with ``ranked = false``, no rank and a ``note`` saying why.
    """
    cells = varying_cells(per_match)
    keys = [*cells, "player", "model"]
    t = measure_table(per_match, keys, n_resamples, seed)
    t["rounds_per_match"] = t["rounds"] / t["matches"]
    t["ranked"] = t["matches"] >= min_matches
    under = ~t["ranked"]
    t.loc[under, "note"] = [
        "; ".join(
            x
            for x in (f"underpowered: {m} match{'es' if m != 1 else ''} (< {min_matches}), not ranked", n)
            if x
        )
        for m, n in zip(t.loc[under, "matches"], t.loc[under, "note"], strict=True)
    ]
    t = t.sort_values(
        [*cells, "ranked", "payoff_per_round"], ascending=[True] * len(cells) + [False, False], kind="stable"
    ).reset_index(drop=True)
    t.insert(0, "rank", pd.array([pd.NA] * len(t), dtype="Int64"))
    t.insert(1, "rank_low", pd.array([pd.NA] * len(t), dtype="Int64"))
    t.insert(2, "rank_high", pd.array([pd.NA] * len(t), dtype="Int64"))
    groups = t.groupby(cells, sort=False).groups.values() if cells else [t.index]
    pm_groups = per_match.groupby(keys, sort=True)
    for idx in groups:
        ranked = [i for i in idx if t.at[i, "ranked"]]
        if not ranked:
            continue
        t.loc[ranked, "rank"] = np.arange(1, len(ranked) + 1)
        if len(ranked) > 1 and all(t.at[i, "matches"] >= MIN_CLUSTERS for i in ranked):
            samples = np.column_stack(
                [
                    _payoff_samples(
                        pm_groups.get_group(tuple(t.loc[i, keys])), tuple(t.loc[i, keys]), n_resamples, seed
                    )
                    for i in ranked
                ]
            )
            low, high = _rank_intervals(samples)
            t.loc[ranked, "rank_low"] = low
            t.loc[ranked, "rank_high"] = high
        elif len(ranked) == 1:
            t.loc[ranked, ["rank_low", "rank_high"]] = 1
    return t


def payoff_matrix(per_match: pd.DataFrame) -> pd.DataFrame:
    """Mean payoff per round of the row player against the column opponent."""
    g = per_match.groupby(["player", "opponent"])[["payoff", "rounds"]].sum()
    return (g["payoff"] / g["rounds"]).unstack("opponent")
