"""Cluster-bootstrap intervals for calibration measures (cluster = run or match).

Every measure is a function of per-cluster sums, so one ``(n_resamples, n_clusters)`` weight matrix from
:func:`analysis.stats.resample_weights` gives all resampled values by matrix products — no Python loop
per resample. Bins for ECE are fixed on the full sample (equal-mass edges are not re-estimated per
resample).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analysis.calibration._validate import check_pairs
from analysis.calibration.binning import bin_index
from analysis.calibration.scores import LOG_LOSS_EPS
from analysis.stats import MIN_CLUSTERS, Interval, percentile_interval, resample_weights

MEASURES = (
    "n",
    "mean_p",
    "observed",
    "bias",
    "brier",
    "log_loss",
    "ece_width",
    "ece_mass",
    "reliability",
    "resolution",
    "uncertainty",
)
"""Measures returned by :func:`bootstrap_measures` with ``full=True`` (``n`` is the pair count, no interval)."""


def murphy_groups(p: NDArray[np.float64], max_distinct: int = 101, n_bins: int = 10) -> NDArray[np.int64]:
    """Groups for the Murphy decomposition: distinct p values when there are at most ``max_distinct``
    of them (the decomposition is then exact), else equal-width bins."""
    vals, inv = np.unique(p, return_inverse=True)
    if vals.size <= max_distinct:
        return inv.astype(np.int64)
    return bin_index(p, n_bins, "width")


def _per_cluster(cl: NDArray[np.int64], n_cl: int, values: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.bincount(cl, weights=values, minlength=n_cl), np.float64)


def _per_cluster_bin(
    cl: NDArray[np.int64], n_cl: int, b: NDArray[np.int64], n_b: int, values: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    flat = cl * n_b + b
    out = np.bincount(flat, weights=values, minlength=n_cl * n_b)
    return out.reshape(n_cl, n_b).astype(np.float64)


def _measures(
    n: NDArray[np.float64],
    s: dict[str, NDArray[np.float64]],
    tabs: dict[str, tuple[NDArray[np.float64], ...]],
) -> dict[str, NDArray[np.float64]]:
    """Measures from (possibly resampled) totals; arrays broadcast over a leading resample axis."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_p = s["p"] / n
        obs = s["y"] / n
        out = {
            "n": n,
            "mean_p": mean_p,
            "observed": obs,
            "bias": mean_p - obs,
            "brier": s["sq"] / n,
            "log_loss": s["ll"] / n,
        }
        for key, name in (("w", "ece_width"), ("m", "ece_mass")):
            if key in tabs:
                out[name] = np.sum(np.abs(tabs[key][1] - tabs[key][2]), axis=-1) / n
        if "g" in tabs:
            cnt, sp, sy = tabs["g"]
            safe = np.where(cnt > 0, cnt, 1.0)
            rel = np.sum(np.where(cnt > 0, (sp - sy) ** 2 / safe, 0.0), axis=-1) / n
            res = np.sum(np.where(cnt > 0, cnt * (sy / safe - obs[..., None]) ** 2, 0.0), axis=-1) / n
            out["reliability"] = rel
            out["resolution"] = res
            out["uncertainty"] = obs * (1.0 - obs)
    return out


def bootstrap_measures(
    p: ArrayLike,
    y: ArrayLike,
    clusters: ArrayLike,
    *,
    n_bins: int = 10,
    n_resamples: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    extra: dict[str, ArrayLike] | None = None,
    full: bool = True,
) -> dict[str, Interval]:
    """Point estimates and cluster-bootstrap percentile intervals of every calibration measure.

    Args:
        p: stated probabilities (no missing values).
        y: 0/1 outcomes.
        clusters: cluster label per pair (run or match id).
        n_bins: bins for ECE (equal-width and equal-mass) and the Murphy fallback.
        n_resamples: bootstrap resamples.
        seed: integer seed or Generator.
        level: interval coverage.
        extra: optional named per-pair squared-error arrays (e.g. cross-fitted recalibrated Brier terms);
            each gets an interval for its mean and for its difference from the raw Brier (``<name>_minus_brier``).
        full: all measures; False skips equal-mass ECE and the Murphy decomposition (faster breakdowns).

    Returns:
        Mapping measure name → :class:`analysis.stats.Interval`; fewer than 3 clusters give estimates
        with NaN bounds and a note.
    """
    p_arr, y_arr = check_pairs(p, y)
    c = np.asarray(clusters).ravel()
    if c.size != p_arr.size:
        raise ValueError(f"clusters has {c.size} entries but there are {p_arr.size} pairs")
    _, cl = np.unique(c, return_inverse=True)
    cl = cl.astype(np.int64)
    n_cl = int(cl.max()) + 1
    q = np.clip(p_arr, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    per = {
        "p": _per_cluster(cl, n_cl, p_arr),
        "y": _per_cluster(cl, n_cl, y_arr),
        "sq": _per_cluster(cl, n_cl, (p_arr - y_arr) ** 2),
        "ll": _per_cluster(cl, n_cl, -(y_arr * np.log(q) + (1.0 - y_arr) * np.log1p(-q))),
    }
    extra_sq = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in (extra or {}).items()}
    for name, v in extra_sq.items():
        if v.size != p_arr.size:
            raise ValueError(f"extra measure {name!r} has {v.size} entries but there are {p_arr.size} pairs")
        per[f"x:{name}"] = _per_cluster(cl, n_cl, v)
    per_n = np.bincount(cl, minlength=n_cl).astype(np.float64)

    def binned(b: NDArray[np.int64], k: int) -> tuple[NDArray[np.float64], ...]:
        return (
            _per_cluster_bin(cl, n_cl, b, k, None),
            _per_cluster_bin(cl, n_cl, b, k, p_arr),
            _per_cluster_bin(cl, n_cl, b, k, y_arr),
        )

    tabs = {"w": binned(bin_index(p_arr, n_bins, "width"), n_bins)}
    if full:
        g = murphy_groups(p_arr, n_bins=n_bins)
        tabs["m"] = binned(bin_index(p_arr, n_bins, "mass"), n_bins)
        tabs["g"] = binned(g, int(g.max()) + 1)
    # one (clusters x columns) matrix, so a resample's totals are a single matrix product
    blocks: list[tuple[str, int, int]] = []
    cols: list[NDArray[np.float64]] = [per_n[:, None]]
    blocks.append(("n", 0, 1))
    pos = 1
    for k, v in per.items():
        cols.append(v[:, None])
        blocks.append((f"s:{k}", pos, pos + 1))
        pos += 1
    for k, parts in tabs.items():
        for i, a in enumerate(parts):
            cols.append(a)
            blocks.append((f"t:{k}:{i}", pos, pos + a.shape[1]))
            pos += a.shape[1]
    stacked = np.hstack(cols)

    def totals(weights: NDArray[np.float64] | None) -> dict[str, NDArray[np.float64]]:
        tot = stacked.sum(axis=0) if weights is None else weights @ stacked
        part = {name: tot[..., a:b] for name, a, b in blocks}
        n = part["n"][..., 0]
        s = {k: part[f"s:{k}"][..., 0] for k in per}
        t = {k: tuple(part[f"t:{k}:{i}"] for i in range(3)) for k in tabs}
        out = _measures(n, s, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            for name in extra_sq:
                out[name] = s[f"x:{name}"] / n
                out[f"{name}_minus_brier"] = out[name] - out["brier"]
        return out

    point = totals(None)
    if n_cl < MIN_CLUSTERS:
        note = f"{n_cl} cluster{'s' if n_cl != 1 else ''} (< {MIN_CLUSTERS}); no interval"
        return {k: Interval(float(v), math.nan, math.nan, n_cl, note) for k, v in point.items()}
    w = resample_weights(n_cl, n_resamples, seed).astype(np.float64)
    samples = totals(w)
    result = {}
    for k, v in point.items():
        if k == "n":
            result[k] = Interval(float(v), math.nan, math.nan, n_cl, "count")
            continue
        lo, hi = percentile_interval(samples[k], level)
        result[k] = Interval(float(v), lo, hi, n_cl)
    return result
