"""Calibration tables: measures with intervals per group, recalibration, reliability bins."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.calibration.intervals import MEASURES, bootstrap_measures
from analysis.calibration.recalibrate import cross_fit
from analysis.calibration.scores import reliability_curve

BASE_KEYS = ("source", "game_type", "model")
"""Every table is split at least by these: confidence sources and games are never pooled."""

BREAKDOWNS = {
    "subject": "subject",
    "schedule": "schedule",
    "agent": "agent",
    "memory": "memory",
    "game": "game",
    "round": "round",
}
"""Breakdown name → column; a breakdown is written when its column has any non-empty value."""

MIN_RECALIBRATION_PAIRS = 20
MIN_SOLID_CLUSTERS = 10
"""A group resting on fewer clusters (sessions / matches) than this is flagged ``underpowered`` in ``note``:
its interval (none below 3 clusters) is too unstable to compare groups by."""


@dataclass(frozen=True)
class Settings:
    """Analysis settings shared by every table."""

    n_bins: int = 10
    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95
    n_folds: int = 5
    max_groups: int = 100


def group_seed(seed: int, key: Sequence[object]) -> np.random.Generator:
    """A generator for one group, stable across processes (crc32 of the group key)."""
    return np.random.default_rng([seed, zlib.crc32("|".join(map(str, key)).encode())])


def _interval_columns(res: dict, names: Sequence[str]) -> dict[str, float]:
    row: dict[str, float] = {}
    for name in names:
        iv = res[name]
        row[name] = iv.estimate
        if name != "n":
            row[f"{name}_low"] = iv.low
            row[f"{name}_high"] = iv.high
    return row


def _exact_columns(g: pd.DataFrame) -> dict[str, float]:
    has = g["p_exact"].notna()
    if not has.any():
        return {"n_exact": 0, "mse_exact": math.nan, "bias_exact": math.nan}
    d = g.loc[has, "p"].to_numpy() - g.loc[has, "p_exact"].to_numpy()
    return {"n_exact": int(has.sum()), "mse_exact": float(np.mean(d**2)), "bias_exact": float(np.mean(d))}


def measure_table(
    df: pd.DataFrame, keys: Sequence[str], settings: Settings, *, recalibrate: bool = False
) -> pd.DataFrame:
    """One row per group of ``keys``: pair counts, missing confidences, clusters, every measure with its
    cluster-bootstrap interval, the noise-free score against ``p_exact`` where present, and (optionally)
    the cross-fitted Platt and isotonic Brier scores with intervals. Without ``recalibrate`` (breakdowns)
    the equal-mass ECE and the Murphy decomposition are skipped."""
    rows = []
    for key, g in df.groupby(list(keys), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        stated = g[g["p"].notna()]
        row["missing"] = int(len(g) - len(stated))
        row["clusters"] = int(stated["cluster_id"].nunique())
        if stated.empty:
            row["n"] = 0
            rows.append(row)
            continue
        p = stated["p"].to_numpy()
        y = stated["outcome"].to_numpy()
        c = stated["cluster_id"].to_numpy()
        extra = {}
        notes = []
        if recalibrate:
            if len(stated) >= MIN_RECALIBRATION_PAIRS:
                for method in ("platt", "isotonic"):
                    cf = cross_fit(
                        p, y, c, method, settings.n_folds, group_seed(settings.seed, (*key, method))
                    )
                    extra[f"brier_{method}"] = (cf.p_oof - y) ** 2
            else:
                notes.append(f"no recalibration (< {MIN_RECALIBRATION_PAIRS} pairs)")
        res = bootstrap_measures(
            p,
            y,
            c,
            n_bins=settings.n_bins,
            n_resamples=settings.n_resamples,
            seed=group_seed(settings.seed, key),
            level=settings.level,
            extra=extra,
            full=recalibrate,
        )
        names = [k for k in MEASURES if k in res] + [k for k in res if k not in MEASURES]
        row.update(_interval_columns(res, names))
        row["n"] = int(row["n"])
        row.update(_exact_columns(stated))
        if recalibrate and not extra:
            for m in ("brier_platt", "brier_isotonic"):
                row[m] = math.nan
        if row["clusters"] < MIN_SOLID_CLUSTERS:
            k = row["clusters"]
            notes.insert(0, f"underpowered: {k} cluster{'s' if k != 1 else ''} (< {MIN_SOLID_CLUSTERS})")
        row["note"] = "; ".join([*notes, res["brier"].note] if res["brier"].note else notes)
        rows.append(row)
    return pd.DataFrame(rows)


def reliability_table(df: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Reliability bins (equal-width and equal-mass) per source × game × model, with Wilson intervals."""
    rows = []
    stated = df[df["p"].notna()]
    for key, g in stated.groupby(list(BASE_KEYS), sort=True):
        for strategy in ("width", "mass"):
            for b in reliability_curve(g["p"], g["outcome"], settings.n_bins, strategy, settings.level):
                rows.append(
                    {
                        **dict(zip(BASE_KEYS, key, strict=True)),
                        "strategy": strategy,
                        "bin": b.bin,
                        "lower": b.lower,
                        "upper": b.upper,
                        "count": b.count,
                        "mean_p": b.mean_p,
                        "observed": b.observed,
                        "observed_low": b.low,
                        "observed_high": b.high,
                    }
                )
    return pd.DataFrame(rows)
