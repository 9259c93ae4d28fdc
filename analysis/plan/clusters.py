"""A cell's units summed into the analysis's resampling clusters, and bootstrap intervals over them."""

from __future__ import annotations

import numpy as np

from analysis.plan.design import Units
from analysis.stats import Interval, RatioInput, bootstrap_difference, cluster_bootstrap_ratio


def cluster_sums(units: Units) -> RatioInput:
    """Per-cluster (num, den) sums: sessions (``session``), units (``unit``) or items (``item``)."""
    if units.design == "unit":
        return RatioInput(units.num, units.den)
    groups = units.session
    if units.design == "item":
        if units.item is None:
            raise ValueError("an item design needs each unit's item")
        groups = units.item
    _, codes = np.unique(groups, return_inverse=True)
    return RatioInput(np.bincount(codes, weights=units.num), np.bincount(codes, weights=units.den))


def interval(units: Units, *, n_resamples: int, seed: int | np.random.Generator, level: float) -> Interval:
    """The cluster-bootstrap interval of the cell's ratio (as the analyses compute it)."""
    c = cluster_sums(units)
    return cluster_bootstrap_ratio(c.num, c.den, n_resamples=n_resamples, seed=seed, level=level)


def difference(
    a: Units, b: Units, *, n_resamples: int, seed: int | np.random.Generator, level: float
) -> Interval:
    """The bootstrap interval of ratio(a) − ratio(b), the cells resampled independently."""
    return bootstrap_difference(
        cluster_sums(a), cluster_sums(b), n_resamples=n_resamples, seed=seed, level=level
    )
