"""Tests of analysis.stats against naive loop implementations and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from analysis.stats import (
    Interval,
    RatioInput,
    bootstrap_difference,
    cluster_bootstrap_mean,
    cluster_bootstrap_ratio,
    percentile_interval,
    resample_weights,
    wilson_interval,
)


def test_resample_weights_shape_sums_and_seed() -> None:
    w = resample_weights(7, 300, 1)
    assert w.shape == (300, 7)
    assert np.issubdtype(w.dtype, np.integer)
    assert np.all(w.sum(axis=1) == 7)
    assert np.array_equal(w, resample_weights(7, 300, 1))
    assert not np.array_equal(w, resample_weights(7, 300, 2))
    # each cluster is drawn n/n = 1 time on average
    assert abs(resample_weights(5, 20000, 3).mean() - 1.0) < 0.02


@pytest.mark.parametrize("bad", [(0, 10), (3, 0)])
def test_resample_weights_rejects_empty(bad: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        resample_weights(*bad, seed=0)


def _naive_ratio_boot(num, den, n_resamples, seed, level=0.95):
    """Loop implementation: draw cluster indices with replacement, same multinomial stream."""
    w = resample_weights(len(num), n_resamples, seed)
    out = []
    for row in w:
        idx = np.repeat(np.arange(len(num)), row)
        out.append(np.sum(np.asarray(num)[idx]) / np.sum(np.asarray(den)[idx]))
    a = (1 - level) / 2
    return np.quantile(out, [a, 1 - a])


def test_ratio_matches_naive_loop() -> None:
    rng = np.random.default_rng(5)
    num = rng.integers(0, 6, 25).astype(float)
    den = rng.integers(1, 4, 25).astype(float)
    iv = cluster_bootstrap_ratio(num, den, n_resamples=2000, seed=11)
    lo, hi = _naive_ratio_boot(num, den, 2000, 11)
    assert iv.estimate == pytest.approx(num.sum() / den.sum())
    assert iv.low == pytest.approx(lo) and iv.high == pytest.approx(hi)
    assert iv.n_clusters == 25 and iv.note == ""


def test_mean_agrees_with_scipy_bootstrap() -> None:
    # With one observation per cluster the cluster bootstrap is the ordinary bootstrap of the mean.
    rng = np.random.default_rng(0)
    x = rng.normal(2.0, 1.0, 200)
    iv = cluster_bootstrap_mean(x, np.arange(200), n_resamples=5000, seed=0)
    ref = sps.bootstrap((x,), np.mean, n_resamples=5000, method="percentile", random_state=1)
    assert iv.estimate == pytest.approx(x.mean())
    assert iv.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert iv.high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_mean_resamples_whole_clusters() -> None:
    # Two clusters of identical values inside: cluster bootstrap ignores within-cluster size.
    values = [1, 1, 1, 1, 0, 0, 0, 0, 5]
    clusters = ["a", "a", "a", "a", "b", "b", "b", "b", "c"]
    iv = cluster_bootstrap_mean(values, clusters, n_resamples=500, seed=0)
    assert iv.estimate == pytest.approx(9 / 9)
    assert iv.n_clusters == 3
    assert iv.low >= 0 and iv.high <= 5


def test_fewer_than_three_clusters_gives_no_interval() -> None:
    iv = cluster_bootstrap_ratio([3, 4], [1, 1])
    assert iv.estimate == pytest.approx(3.5)
    assert math.isnan(iv.low) and math.isnan(iv.high)
    assert "2 clusters" in iv.note and "no interval" in iv.note
    assert not iv.significant
    assert "no interval" in iv.format()


def test_zero_denominator_is_explained() -> None:
    iv = cluster_bootstrap_ratio([0, 0, 0], [0, 0, 0])
    assert math.isnan(iv.estimate)
    assert "denominator is 0" in iv.note


def test_ratio_rejects_nan_and_length_mismatch() -> None:
    with pytest.raises(ValueError, match="same length"):
        cluster_bootstrap_ratio([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        cluster_bootstrap_ratio([1, math.nan, 2], [1, 1, 1])


def test_difference_independent_resampling_matches_naive() -> None:
    rng = np.random.default_rng(9)
    a = (rng.integers(0, 3, 30).astype(float), np.ones(30))
    b = (rng.integers(2, 6, 40).astype(float), np.ones(40))
    iv = bootstrap_difference(a, b, n_resamples=3000, seed=4)
    gen = np.random.default_rng(4)
    wa = resample_weights(30, 3000, gen)
    wb = resample_weights(40, 3000, gen)
    naive = [(wa[r] @ a[0]) / (wa[r] @ a[1]) - (wb[r] @ b[0]) / (wb[r] @ b[1]) for r in range(3000)]
    assert iv.estimate == pytest.approx(a[0].mean() - b[0].mean())
    assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(naive, [0.025, 0.975])))
    assert iv.significant == (iv.high < 0 or iv.low > 0)


def test_difference_small_cell_note() -> None:
    iv = bootstrap_difference(RatioInput.of([1, 2], [1, 1]), ([1, 2, 3, 4], [1, 1, 1, 1]))
    assert iv.estimate == pytest.approx(1.5 - 2.5)
    assert "first cell" in iv.note and not iv.has_interval


def test_significance() -> None:
    assert Interval(1.0, 0.2, 1.5, 10).significant
    assert Interval(-1.0, -1.5, -0.1, 10).significant
    assert not Interval(0.1, -0.2, 0.5, 10).significant


def test_percentile_interval_ignores_nan() -> None:
    lo, hi = percentile_interval(np.array([np.nan, *range(101)]), 0.9)
    assert (lo, hi) == pytest.approx((5.0, 95.0))
    assert all(math.isnan(v) for v in percentile_interval(np.array([np.nan])))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (57, 120), (1, 1), (499, 1000)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_matches_the_textbook_formula(k: int, n: int, level: float) -> None:
    z = sps.norm.ppf(1 - (1 - level) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    expected = (max(0.0, centre - half), min(1.0, centre + half))
    assert wilson_interval(k, n, level) == pytest.approx(expected, abs=1e-12)


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="n > 0"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 3)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 5)), min_size=3, max_size=30), st.integers(0, 99))
def test_interval_contains_estimate_for_sums(pairs: list[tuple[int, int]], seed: int) -> None:
    num = [p[0] for p in pairs]
    den = [p[1] for p in pairs]
    iv = cluster_bootstrap_ratio(num, den, n_resamples=400, seed=seed)
    lo_bound = min(n / d for n, d in pairs)
    hi_bound = max(n / d for n, d in pairs)
    assert lo_bound - 1e-12 <= iv.low <= iv.high <= hi_bound + 1e-12


def test_bootstrap_totals_equals_weight_product_and_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import analysis.stats as stats

    m = np.random.default_rng(0).integers(0, 5, size=(40, 3)).astype(float)
    full = stats.bootstrap_totals(m, 300, 7)
    assert np.allclose(full, resample_weights(40, 300, 7) @ m)
    monkeypatch.setattr(stats, "BLOCK_ELEMENTS", 400)  # blocks of 10 resamples
    blocked = stats.bootstrap_totals(m, 300, 7)
    assert blocked.shape == (300, 3)
    # every resample keeps the cluster count: totals of a column of ones equal n
    ones = stats.bootstrap_totals(np.ones(40), 300, 7)
    assert np.all(ones == 40)
    assert blocked.mean(axis=0) == pytest.approx(m.sum(axis=0), rel=0.05)


def test_resample_weights_is_multinomial() -> None:
    # Counts of one cluster across resamples follow Binomial(n, 1/n): mean 1, variance (n-1)/n.
    w = resample_weights(10, 40000, 5)
    assert w[:, 0].mean() == pytest.approx(1.0, abs=0.02)
    assert w[:, 0].var() == pytest.approx(0.9, abs=0.03)


def test_bootstrap_totals_compressed_rows_same_distribution() -> None:
    import analysis.stats as stats

    # 2,000 clusters with only 6 distinct rows: the distinct-row path must match the dense bootstrap.
    rng = np.random.default_rng(1)
    base = np.array([[0, 1], [1, 1], [2, 1], [3, 1], [0, 2], [5, 2]], dtype=float)
    m = base[rng.integers(0, 6, 2000)]
    fast = stats.bootstrap_totals(m, 4000, 3)
    dense = resample_weights(2000, 4000, 4) @ m
    assert np.all(fast[:, 1] >= 2000)
    for col in range(2):
        assert fast[:, col].mean() == pytest.approx(dense[:, col].mean(), rel=0.002)
        assert fast[:, col].std() == pytest.approx(dense[:, col].std(), rel=0.08)
    ratio_fast = np.quantile(fast[:, 0] / fast[:, 1], [0.025, 0.975])
    ratio_dense = np.quantile(dense[:, 0] / dense[:, 1], [0.025, 0.975])
    assert ratio_fast == pytest.approx(ratio_dense, rel=0.01)
