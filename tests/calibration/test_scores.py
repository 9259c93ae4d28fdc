"""Calibration scores against scikit-learn and naive reference computations."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from analysis.calibration import scores
from analysis.calibration.binning import bin_index
from analysis.stats import wilson_interval


def _data(n: int = 500, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0, 1, n), 2)
    y = (rng.uniform(0, 1, n) < p**1.5).astype(float)
    return p, y


def test_brier_matches_sklearn() -> None:
    p, y = _data()
    assert scores.brier(p, y) == pytest.approx(brier_score_loss(y, p), abs=1e-12)


def test_log_loss_matches_sklearn() -> None:
    p, y = _data()
    p = np.clip(p, 0.01, 0.99)
    assert scores.log_loss(p, y) == pytest.approx(sk_log_loss(y, p), rel=1e-9)


def test_log_loss_is_finite_for_confident_mistakes() -> None:
    assert np.isfinite(scores.log_loss([0.0, 1.0], [1, 0]))


@pytest.mark.parametrize("n_bins", [None, 5, 10])
def test_murphy_identity_holds(n_bins: int | None) -> None:
    p, y = _data()
    m = scores.murphy(p, y, n_bins=n_bins)
    assert m.reliability - m.resolution + m.uncertainty + m.within == pytest.approx(m.brier, abs=1e-12)
    if n_bins is None:
        assert m.within == pytest.approx(0.0, abs=1e-12)


def test_murphy_naive_reference() -> None:
    p = np.array([0.2, 0.2, 0.2, 0.8, 0.8])
    y = np.array([0, 1, 0, 1, 1])
    m = scores.murphy(p, y)
    base = 3 / 5
    rel = (3 * (0.2 - 1 / 3) ** 2 + 2 * (0.8 - 1.0) ** 2) / 5
    res = (3 * (1 / 3 - base) ** 2 + 2 * (1.0 - base) ** 2) / 5
    assert (m.reliability, m.resolution, m.uncertainty) == pytest.approx((rel, res, base * (1 - base)))


def test_ece_naive_loop() -> None:
    p, y = _data(300, 4)
    for strategy in ("width", "mass"):
        idx = bin_index(p, 7, strategy)
        expected = sum(
            (idx == k).sum() / p.size * abs(p[idx == k].mean() - y[idx == k].mean())
            for k in range(7)
            if (idx == k).any()
        )
        assert scores.ece(p, y, 7, strategy) == pytest.approx(expected)


def test_equal_mass_bins_are_balanced() -> None:
    p = np.random.default_rng(0).uniform(size=1000)
    counts = np.bincount(bin_index(p, 10, "mass"))
    assert counts.min() == counts.max() == 100
    idx = bin_index(p, 10, "mass")
    assert all(p[idx == k].max() <= p[idx == k + 1].min() for k in range(9))


def test_width_bins_edges() -> None:
    assert bin_index(np.array([0.0, 0.0999, 0.1, 0.95, 1.0]), 10, "width").tolist() == [0, 0, 1, 9, 9]


def test_perfectly_calibrated_has_zero_ece_and_bias() -> None:
    p = np.array([0.25] * 4 + [0.75] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    assert scores.ece(p, y) == pytest.approx(0.0)
    assert scores.bias(p, y) == pytest.approx(0.0)


def test_underconfidence_sign() -> None:
    # the spec's reference: stated ~0.5, opponent cooperated ~0.9 of the time -> negative bias
    p = np.full(100, 0.5)
    y = (np.arange(100) < 89).astype(float)
    assert scores.bias(p, y) == pytest.approx(-0.39)


def test_reliability_curve_counts_and_wilson() -> None:
    p, y = _data(400, 2)
    curve = scores.reliability_curve(p, y, n_bins=5)
    assert sum(b.count for b in curve) == p.size
    for b in curve:
        in_bin = bin_index(p, 5, "width") == b.bin
        assert b.observed == pytest.approx(y[in_bin].mean())
        assert (b.low, b.high) == pytest.approx(wilson_interval(int(y[in_bin].sum()), int(in_bin.sum())))
        assert b.low <= b.observed <= b.high


def test_reliability_curve_mass_edges() -> None:
    p, y = _data(100, 3)
    curve = scores.reliability_curve(p, y, n_bins=4, strategy="mass")
    assert [b.count for b in curve] == [25, 25, 25, 25]
    assert all(b.lower <= b.mean_p <= b.upper for b in curve)


@pytest.mark.parametrize(
    ("p", "y", "message"),
    [
        ([0.1, np.nan], [0, 1], "missing"),
        ([0.1, 1.2], [0, 1], r"\[0, 1\]"),
        ([0.1, 0.2], [0, 2], "0 or 1"),
        ([0.1], [0, 1], "differ in length"),
        ([], [], "empty"),
    ],
)
def test_bad_input_raises_clear_error(p: list, y: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        scores.brier(p, y)


def test_reliability_wilson_matches_textbook_formula() -> None:
    p = np.array([0.15] * 7 + [0.85] * 13)
    y = np.array([1, 0, 0, 0, 0, 0, 0] + [1] * 10 + [0] * 3)
    z = 1.959963984540054
    for b in scores.reliability_curve(p, y, n_bins=2):
        n, k = b.count, round(b.observed * b.count)
        ph = k / n
        centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))
        assert (b.low, b.high) == pytest.approx((centre - half, centre + half), abs=1e-12)
