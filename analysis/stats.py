"""Vectorised resampling statistics shared by every analysis.

All bootstrap functions draw a single ``(n_resamples, n_clusters)`` matrix of multinomial
cluster counts and compute every resampled statistic with one matrix product — there is no
Python loop per resample. Every random draw comes from a seeded :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.stats import binomtest

from analysis.text import interval_text

MIN_CLUSTERS = 3
"""Fewer clusters than this give a point estimate but no interval."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval.

    Attributes:
        estimate: The statistic on the original data (NaN only when undefined, with a ``note``).
        low: Lower interval bound (NaN, with a ``note``, when there are fewer than 3 clusters).
        high: Upper interval bound (NaN likewise).
        n_clusters: Number of resampling clusters behind the estimate.
        note: Why the interval (or estimate) is missing; empty when complete.
    """

    estimate: float
    low: float
    high: float
    n_clusters: int
    note: str = ""

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0 (False when the interval is missing)."""
        if math.isnan(self.low) or math.isnan(self.high):
            return False
        return self.low > 0 or self.high < 0

    @property
    def has_interval(self) -> bool:
        """True when both bounds are finite numbers."""
        return not (math.isnan(self.low) or math.isnan(self.high))

    def format(self, digits: int = 2) -> str:
        """Human-readable ``estimate [low, high]`` text, or the note when incomplete."""
        return interval_text(
            self.estimate,
            self.low,
            self.high,
            digits,
            missing=f"n/a ({self.note})" if self.note else "n/a",
            alone=f" (no interval: {self.note})" if self.note else "",
        )


def _as_generator(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def resample_weights(n_clusters: int, n_resamples: int, seed: int | np.random.Generator) -> np.ndarray:
    """Cluster counts for a nonparametric bootstrap.

    Row ``r`` says how many times each cluster is drawn in resample ``r`` (sampling ``n_clusters``
    clusters with replacement), so ``weights @ per_cluster_sums`` gives every resampled total at once.

    Args:
        n_clusters: Number of clusters (must be >= 1).
        n_resamples: Number of bootstrap resamples (must be >= 1).
        seed: Integer seed or a numpy Generator.

    Returns:
        Integer array of shape ``(n_resamples, n_clusters)`` whose rows each sum to ``n_clusters``.
    """
    if n_clusters < 1:
        raise ValueError(f"resample_weights needs at least 1 cluster, got {n_clusters}")
    if n_resamples < 1:
        raise ValueError(f"resample_weights needs at least 1 resample, got {n_resamples}")
    rng = _as_generator(seed)
    # Equivalent to rng.multinomial(n_clusters, uniform, size=n_resamples) but O(R·n) vectorised:
    # draw every cluster index at once and count them per resample row.
    idx = _draw_indices(rng, n_clusters, n_resamples)
    flat = idx + (np.arange(n_resamples, dtype=idx.dtype) * n_clusters)[:, None]
    return np.bincount(flat.ravel(), minlength=n_resamples * n_clusters).reshape(n_resamples, n_clusters)


def _draw_indices(rng: np.random.Generator, n_clusters: int, rows: int) -> np.ndarray:
    """``rows`` resamples of ``n_clusters`` cluster indices drawn uniformly with replacement."""
    dtype = np.int32 if rows * n_clusters < 2**31 else np.int64
    return rng.integers(0, n_clusters, size=(rows, n_clusters), dtype=dtype)


BLOCK_ELEMENTS = 1 << 22
"""Cluster draws (resamples × clusters) held in memory at once by :func:`bootstrap_totals`."""


def bootstrap_totals(
    per_cluster: np.ndarray, n_resamples: int, seed: int | np.random.Generator
) -> np.ndarray:
    """Resampled column totals of a (clusters × k) matrix of per-cluster sums.

    Same bootstrap distribution as ``resample_weights(n, R, seed) @ per_cluster`` (identical draws when the
    rows are mostly distinct and one block suffices), computed as a sparse (resamples × clusters) selection
    matrix times the per-cluster matrix, in blocks of resamples so memory stays bounded. When at most a
    quarter of the rows are distinct, the distinct rows are drawn instead (multinomial with their
    frequencies), which is exact and much cheaper. No loop runs per resample.

    Returns:
        Float array of shape ``(n_resamples, k)``.
    """
    m = np.asarray(per_cluster, dtype=float)
    if m.ndim == 1:
        m = m[:, None]
    n = m.shape[0]
    if n < 1:
        raise ValueError("bootstrap_totals needs at least 1 cluster")
    rng = _as_generator(seed)
    rows_u, counts = np.unique(m, axis=0, return_counts=True)
    if rows_u.shape[0] * 4 <= n:
        # Many clusters share the same sums (e.g. per-game counts): the resampled totals depend only on
        # how often each distinct row is drawn, which is multinomial over the distinct rows with
        # probabilities count/n — the same bootstrap distribution at a fraction of the draws.
        picks = rng.multinomial(n, counts / n, size=n_resamples)
        return picks.astype(np.float64) @ rows_u
    step = max(1, min(n_resamples, BLOCK_ELEMENTS // n))
    out = np.empty((n_resamples, m.shape[1]))
    for start in range(0, n_resamples, step):  # a few large blocks of resamples
        rows = min(step, n_resamples - start)
        idx = _draw_indices(rng, n, rows).ravel()
        # Row r of the selection matrix holds a 1 for every draw; duplicates add up in the product.
        select = sparse.csr_matrix((np.ones(idx.size), idx, np.arange(0, idx.size + 1, n)), shape=(rows, n))
        out[start : start + rows] = select @ m
    return out


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap samples, ignoring NaN resamples.

    Args:
        samples: 1-D array of resampled statistics.
        level: Coverage level in (0, 1).

    Returns:
        ``(low, high)``; ``(nan, nan)`` when no finite sample exists.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    arr = np.asarray(samples, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return (math.nan, math.nan)
    alpha = (1 - level) / 2
    low, high = np.quantile(arr, [alpha, 1 - alpha])
    return (float(low), float(high))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _ratio_samples(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> np.ndarray:
    top = weights @ num
    bottom = weights @ den
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0), np.nan)


@dataclass(frozen=True)
class RatioInput:
    """Per-cluster numerator and denominator sums of a ratio statistic (one cell)."""

    num: np.ndarray
    den: np.ndarray

    @classmethod
    def of(cls, num: Sequence[float] | np.ndarray, den: Sequence[float] | np.ndarray) -> RatioInput:
        """Validate and wrap per-cluster sums."""
        n = np.asarray(num, dtype=float).ravel()
        d = np.asarray(den, dtype=float).ravel()
        if n.shape != d.shape:
            raise ValueError(f"num and den must have the same length, got {n.size} and {d.size}")
        if not (np.all(np.isfinite(n)) and np.all(np.isfinite(d))):
            raise ValueError("num and den must be finite numbers (found NaN or inf)")
        return cls(n, d)

    @property
    def n_clusters(self) -> int:
        """Number of clusters."""
        return int(self.num.size)

    @property
    def estimate(self) -> float:
        """sum(num) / sum(den), NaN when the denominator is 0."""
        d = float(self.den.sum())
        return float(self.num.sum()) / d if d != 0 else math.nan

    def samples(self, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
        """Resampled ratios (one per resample)."""
        w = resample_weights(self.n_clusters, n_resamples, rng)
        return _ratio_samples(self.num, self.den, w)


def _incomplete(estimate: float, n: int, what: str = "") -> Interval:
    prefix = f"{what}: " if what else ""
    return Interval(
        estimate,
        math.nan,
        math.nan,
        n,
        f"{prefix}{n} cluster{'s' if n != 1 else ''} (< {MIN_CLUSTERS}); no interval",
    )


def cluster_bootstrap_ratio(
    num: Sequence[float] | np.ndarray,
    den: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 5000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    weights: np.ndarray | None = None,
) -> Interval:
    """Cluster bootstrap of a ratio of sums, e.g. verifications per game or a pooled share.

    Args:
        num: Per-cluster numerator sums.
        den: Per-cluster denominator sums (e.g. games, or all verifications).
        n_resamples: Bootstrap resamples.
        seed: Integer seed or Generator.
        level: Interval coverage.
        weights: Optional precomputed ``(n_resamples, n_clusters)`` counts (overrides seed/n_resamples).

    Returns:
        The :class:`Interval`; bounds are NaN with a note when fewer than 3 clusters, and the estimate
        is NaN with a note when the denominator is 0.
    """
    _check_level(level)
    cell = RatioInput.of(num, den)
    n = cell.n_clusters
    est = cell.estimate
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, "no clusters (empty cell)")
    if math.isnan(est):
        return Interval(math.nan, math.nan, math.nan, n, "denominator is 0 (nothing to divide by)")
    if n < MIN_CLUSTERS:
        return _incomplete(est, n)
    if weights is None:
        weights = resample_weights(n, n_resamples, _as_generator(seed))
    elif weights.shape[1] != n:
        raise ValueError(f"weights have {weights.shape[1]} columns but there are {n} clusters")
    low, high = percentile_interval(_ratio_samples(cell.num, cell.den, weights), level)
    return Interval(est, low, high, n)


def cluster_sums(values: Sequence[float] | np.ndarray, clusters: Sequence[object] | np.ndarray) -> RatioInput:
    """Per-cluster sums and counts of observation-level values (for a cluster mean)."""
    v = np.asarray(values, dtype=float).ravel()
    c = np.asarray(clusters).ravel()
    if v.shape != c.shape:
        raise ValueError(f"values and clusters must have the same length, got {v.size} and {c.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite numbers (found NaN or inf)")
    if v.size == 0:
        return RatioInput(np.zeros(0), np.zeros(0))
    _, inverse = np.unique(c, return_inverse=True)
    k = int(inverse.max()) + 1
    sums = np.bincount(inverse, weights=v, minlength=k)
    counts = np.bincount(inverse, minlength=k).astype(float)
    return RatioInput(sums, counts)


def cluster_bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    *,
    n_resamples: int = 5000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> Interval:
    """Cluster bootstrap of the mean of observation-level values (clusters resampled whole)."""
    cell = cluster_sums(values, clusters)
    return cluster_bootstrap_ratio(cell.num, cell.den, n_resamples=n_resamples, seed=seed, level=level)


def bootstrap_difference(
    a: RatioInput | tuple[Sequence[float], Sequence[float]],
    b: RatioInput | tuple[Sequence[float], Sequence[float]],
    *,
    n_resamples: int = 5000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> Interval:
    """Bootstrap of ``ratio(a) - ratio(b)`` with the two cells resampled independently.

    Args:
        a: First cell as :class:`RatioInput` or a ``(num, den)`` pair of per-cluster sums.
        b: Second cell likewise (e.g. the anchor).
        n_resamples: Bootstrap resamples.
        seed: Integer seed or Generator (one stream; ``a`` is drawn before ``b``).
        level: Interval coverage.

    Returns:
        :class:`Interval` whose ``n_clusters`` is the smaller cell's cluster count; bounds NaN with a note
        when either cell has fewer than 3 clusters.
    """
    _check_level(level)
    ca = a if isinstance(a, RatioInput) else RatioInput.of(*a)
    cb = b if isinstance(b, RatioInput) else RatioInput.of(*b)
    ea, eb = ca.estimate, cb.estimate
    n = min(ca.n_clusters, cb.n_clusters)
    if math.isnan(ea) or math.isnan(eb):
        which = "first" if math.isnan(ea) else "second"
        return Interval(math.nan, math.nan, math.nan, n, f"{which} cell has no data (denominator 0)")
    est = ea - eb
    if n < MIN_CLUSTERS:
        small = "first" if ca.n_clusters < MIN_CLUSTERS else "second"
        return _incomplete(est, n, f"{small} cell")
    rng = _as_generator(seed)
    diff = ca.samples(n_resamples, rng) - cb.samples(n_resamples, rng)
    low, high = percentile_interval(diff, level)
    return Interval(est, low, high, n)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (scipy's ``binomtest(...).proportion_ci``).

    Raises:
        ValueError: On ``n <= 0`` or ``successes`` outside ``[0, n]``.
    """
    _check_level(level)
    if n <= 0:
        raise ValueError(f"wilson_interval needs n > 0, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return (max(0.0, float(ci.low)), min(1.0, float(ci.high)))
