"""Scoring rules and calibration measures for probability–outcome pairs.

All functions take stated probabilities ``p`` in [0, 1] and outcomes ``y`` in {0, 1} (missing values must
be dropped by the caller; they raise here rather than being filled in).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from analysis.calibration._validate import check_pairs
from analysis.calibration.binning import Strategy, bin_index, bin_sums
from analysis.stats import wilson_interval

LOG_LOSS_EPS = 1e-15
"""Probabilities are clipped to [eps, 1 - eps] in the log loss so a stated 0 or 1 gives a finite loss."""


def brier(p: ArrayLike, y: ArrayLike) -> float:
    """Brier score: mean squared difference between p and the 0/1 outcome."""
    p_arr, y_arr = check_pairs(p, y)
    return float(np.mean((p_arr - y_arr) ** 2))


def log_loss(p: ArrayLike, y: ArrayLike, eps: float = LOG_LOSS_EPS) -> float:
    """Mean negative log-likelihood of the outcomes, with p clipped to [eps, 1 - eps]."""
    p_arr, y_arr = check_pairs(p, y)
    q = np.clip(p_arr, eps, 1.0 - eps)
    return float(-np.mean(y_arr * np.log(q) + (1.0 - y_arr) * np.log1p(-q)))


@dataclass(frozen=True)
class Murphy:
    """Murphy decomposition: ``brier = reliability - resolution + uncertainty + within``.

    ``within`` is exactly 0 when the forecasts are grouped by their distinct values (``n_bins=None``); with
    binned forecasts it holds the within-bin variance/covariance terms so the identity stays exact.
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within: float
    n_groups: int


def murphy(p: ArrayLike, y: ArrayLike, n_bins: int | None = None, strategy: Strategy = "width") -> Murphy:
    """Murphy (1973) decomposition of the Brier score.

    Args:
        p: stated probabilities.
        y: 0/1 outcomes.
        n_bins: None groups by distinct forecast values (exact decomposition); an int bins the forecasts.
        strategy: bin strategy when ``n_bins`` is given.
    """
    p_arr, y_arr = check_pairs(p, y)
    if n_bins is None:
        _, idx = np.unique(p_arr, return_inverse=True)
        k = int(idx.max()) + 1
    else:
        idx, k = bin_index(p_arr, n_bins, strategy), n_bins
    counts, sp, sy = bin_sums(idx, k, p_arr, y_arr)
    return murphy_from_sums(counts, sp, sy, float(np.sum((p_arr - y_arr) ** 2)))


def murphy_from_sums(counts: np.ndarray, sum_p: np.ndarray, sum_y: np.ndarray, sum_sq: float) -> Murphy:
    """Murphy decomposition from per-group counts and sums (used by the bootstrap as well)."""
    n = float(counts.sum())
    if n <= 0:
        raise ValueError("murphy decomposition of an empty sample")
    nz = counts > 0
    pbar = sum_p[nz] / counts[nz]
    ybar_k = sum_y[nz] / counts[nz]
    base = float(sum_y.sum()) / n
    rel = float(np.sum(counts[nz] * (pbar - ybar_k) ** 2) / n)
    res = float(np.sum(counts[nz] * (ybar_k - base) ** 2) / n)
    unc = base * (1.0 - base)
    bs = sum_sq / n
    return Murphy(bs, rel, res, unc, bs - (rel - res + unc), int(nz.sum()))


def ece(p: ArrayLike, y: ArrayLike, n_bins: int = 10, strategy: Strategy = "width") -> float:
    """Expected calibration error: sum over bins of (n_k / N) * |mean p_k - mean y_k|."""
    p_arr, y_arr = check_pairs(p, y)
    idx = bin_index(p_arr, n_bins, strategy)
    counts, sp, sy = bin_sums(idx, n_bins, p_arr, y_arr)
    return float(np.sum(np.abs(sp - sy)) / counts.sum())


def bias(p: ArrayLike, y: ArrayLike) -> float:
    """Over/under-confidence: mean stated p minus observed frequency (> 0 over-, < 0 under-predicts)."""
    p_arr, y_arr = check_pairs(p, y)
    return float(p_arr.mean() - y_arr.mean())


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability curve."""

    bin: int
    lower: float
    upper: float
    count: int
    mean_p: float
    observed: float
    low: float
    high: float


def reliability_curve(
    p: ArrayLike, y: ArrayLike, n_bins: int = 10, strategy: Strategy = "width", level: float = 0.95
) -> list[ReliabilityBin]:
    """Observed frequency per confidence bin, with the bin count and a Wilson interval.

    Empty bins are omitted. ``lower``/``upper`` are the bin's edges (``width``) or the smallest/largest
    probability in it (``mass``).
    """
    p_arr, y_arr = check_pairs(p, y)
    idx = bin_index(p_arr, n_bins, strategy)
    counts, sp, sy = bin_sums(idx, n_bins, p_arr, y_arr)
    if strategy == "mass":
        lo_edge = np.full(n_bins, np.inf)
        hi_edge = np.full(n_bins, -np.inf)
        np.minimum.at(lo_edge, idx, p_arr)
        np.maximum.at(hi_edge, idx, p_arr)
    else:
        lo_edge = np.arange(n_bins) / n_bins
        hi_edge = (np.arange(n_bins) + 1) / n_bins
    out = []
    for k in np.flatnonzero(counts):
        n_k = int(counts[k])
        successes = round(float(sy[k]))
        lo, hi = wilson_interval(successes, n_k, level)
        out.append(
            ReliabilityBin(
                int(k), float(lo_edge[k]), float(hi_edge[k]), n_k, sp[k] / n_k, sy[k] / n_k, lo, hi
            )
        )
    return out
