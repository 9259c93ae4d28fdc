"""Bin assignment for reliability curves and ECE: equal-width and equal-mass (quantile) bins."""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

Strategy = Literal["width", "mass"]


def bin_index(p: NDArray[np.float64], n_bins: int = 10, strategy: Strategy = "width") -> NDArray[np.int64]:
    """Return the 0-based bin of every probability.

    ``width``: bins [0, 1/n), [1/n, 2/n), ..., [(n-1)/n, 1] (p = 1 falls in the last bin).
    ``mass``: the pairs sorted by p (stable) are split into ``n_bins`` groups of near-equal size, so ties
    at a boundary may land in adjacent bins; with fewer pairs than bins some bins stay empty.

    Args:
        p: probabilities in [0, 1].
        n_bins: number of bins (>= 1).
        strategy: ``width`` or ``mass``.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    if strategy == "width":
        return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    if strategy == "mass":
        n = p.size
        order = np.argsort(p, kind="stable")
        ranks = np.empty(n, dtype=np.int64)
        ranks[order] = np.arange(n)
        return (ranks * n_bins) // max(n, 1)
    raise ValueError(f"unknown binning strategy {strategy!r} (use 'width' or 'mass')")


def bin_sums(
    idx: NDArray[np.int64], n_bins: int, *columns: NDArray[np.float64]
) -> tuple[NDArray[np.float64], ...]:
    """Count and per-column sums per bin: returns (counts, sum_col1, sum_col2, ...)."""
    counts = np.bincount(idx, minlength=n_bins).astype(np.float64)
    return (counts, *(np.asarray(np.bincount(idx, weights=c, minlength=n_bins), np.float64) for c in columns))
