"""Platt and isotonic recalibration against scikit-learn; cross-fitting is out-of-fold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from analysis.calibration import recalibrate as rc


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    truth = 1 / (1 + np.exp(-(2.0 * np.log(p / (1 - p)) + 0.7)))
    y = (rng.uniform(size=n) < truth).astype(float)
    return p, y


def test_platt_matches_sklearn_logistic() -> None:
    p, y = _data()
    m = rc.Platt.fit(p, y)
    x = np.log(p / (1 - p))[:, None]
    sk = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x, y)
    assert m.a == pytest.approx(sk.coef_[0, 0], rel=1e-5)
    assert m.b == pytest.approx(sk.intercept_[0], rel=1e-5, abs=1e-6)
    assert np.allclose(m.predict(p), sk.predict_proba(x)[:, 1], atol=1e-7)


def test_platt_recovers_generating_map() -> None:
    p, y = _data(20_000, 5)
    m = rc.Platt.fit(p, y)
    assert m.a == pytest.approx(2.0, abs=0.1)
    assert m.b == pytest.approx(0.7, abs=0.1)


def test_isotonic_matches_sklearn() -> None:
    p, y = _data(400, 3)
    p = np.round(p, 2)  # ties
    ours = rc.Isotonic.fit(p, y)
    sk = IsotonicRegression(out_of_bounds="clip").fit(p, y)
    grid = np.linspace(0, 1, 101)
    assert np.allclose(ours.predict(p), sk.predict(p), atol=1e-12)
    assert np.allclose(ours.predict(grid), sk.predict(grid), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0.1, 5)), min_size=1, max_size=40))
def test_pava_is_monotone_and_weight_preserving(pairs: list[tuple[float, float]]) -> None:
    y = np.array([a for a, _ in pairs])
    w = np.array([b for _, b in pairs])
    f = rc.pava(y, w)
    assert np.all(np.diff(f) >= -1e-12)
    assert np.sum(w * f) == pytest.approx(np.sum(w * y))
    sk = IsotonicRegression().fit_transform(np.arange(y.size), y, sample_weight=w)
    assert np.allclose(f, sk, atol=1e-9)


def test_cross_fit_is_out_of_fold() -> None:
    p, y = _data(500, 7)
    clusters = np.repeat(np.arange(50), 10)
    cf = rc.cross_fit(p, y, clusters, method="platt", n_folds=5, seed=3)
    folds = rc.fold_ids(clusters, 5, np.random.default_rng(3))
    # each cluster lies in exactly one fold
    assert all(np.unique(folds[clusters == c]).size == 1 for c in range(50))
    # the held-out fold's predictions come from a map fitted without it
    test = folds == 0
    manual = rc.Platt.fit(p[~test], y[~test]).predict(p[test])
    assert np.allclose(cf.p_oof[test], manual)
    assert cf.brier_before == pytest.approx(np.mean((p - y) ** 2))
    assert cf.brier_after == pytest.approx(np.mean((cf.p_oof - y) ** 2))


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_cross_fit_improves_miscalibrated_forecasts(method: str) -> None:
    rng = np.random.default_rng(11)
    p = rng.uniform(0.3, 0.7, 4000)
    y = (rng.uniform(size=p.size) < np.clip(2 * p - 0.45, 0, 1)).astype(float)
    cf = rc.cross_fit(p, y, np.arange(p.size) // 40, method=method)
    assert cf.brier_after < cf.brier_before


def test_cross_fit_deterministic_given_seed() -> None:
    p, y = _data(200, 1)
    c = np.arange(200) // 10
    a = rc.cross_fit(p, y, c, "isotonic", seed=4).p_oof
    b = rc.cross_fit(p, y, c, "isotonic", seed=4).p_oof
    assert np.array_equal(a, b)


def test_unknown_method_and_too_few_rows() -> None:
    with pytest.raises(ValueError, match="unknown recalibration method"):
        rc.fit("beta", [0.2, 0.4], [0, 1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 2"):
        rc.cross_fit([0.5], [1], ["a"])
