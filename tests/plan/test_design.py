"""The planning math: variance components, projection, sessions for a width or a power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import f, norm

from analysis.plan import clusters
from analysis.plan.design import (
    Units,
    combine,
    fit,
    sessions_for_power,
    sessions_for_width,
    z_value,
)


def session_units(k: int = 8, g: int = 10, sd_b: float = 0.5, sd_w: float = 1.0, seed: int = 0) -> Units:
    """k sessions of g games: per game a count around 2 + a session effect."""
    rng = np.random.default_rng(seed)
    effect = np.repeat(rng.normal(0, sd_b, k), g)
    values = 2 + effect + rng.normal(0, sd_w, k * g)
    return Units.of(np.repeat(np.arange(k), g), values, np.ones(k * g), "session")


def test_components_recover_a_known_model_and_sum_to_the_session_variance():
    units = session_units(k=400, g=10, sd_b=0.5, sd_w=1.0)
    var = fit(units)
    assert var.design == "session" and var.sessions == 400 and var.units_per_session == 10
    assert var.between == pytest.approx(0.25, rel=0.2) and var.within == pytest.approx(1.0, rel=0.1)
    # balanced sessions: σ²_b + σ²_w/g is exactly the variance of the session means (the direct estimate)
    means = units.num.reshape(400, 10).mean(axis=1)
    assert var.per_session == pytest.approx(means.var(ddof=1))
    assert var.between + var.within / 10 == pytest.approx(var.per_session)
    assert var.df == 399


def test_negative_within_session_correlation_keeps_the_direct_variance():
    # games alternate 0 / 4 within a session: session totals never vary, games vary a lot
    num = np.tile([0.0, 4.0], 20)
    var = fit(Units.of(np.repeat(np.arange(4), 10), num, np.ones(40), "session"))
    assert var.between < 0 < var.within  # the ANOVA says so (not truncated)
    assert var.per_session == pytest.approx(0.0)


def test_projection_matches_the_bootstrap_half_width():
    units = session_units(k=60, seed=3)
    var = fit(units)
    iv = clusters.interval(units, n_resamples=4000, seed=1, level=0.95)
    boot = (iv.high - iv.low) / 2
    # the percentile bootstrap uses the plug-in variance: (k-1)/k of the sample variance
    assert var.half_width(60, 0.95) * math.sqrt(59 / 60) == pytest.approx(boot, rel=0.08)


def test_unit_design_counts_units_as_clusters():
    rng = np.random.default_rng(1)
    units = Units.of(np.repeat(np.arange(3), 10), rng.normal(3, 1, 30), np.ones(30), "unit")
    var = fit(units)
    assert var.design == "unit" and var.clusters_per_session == 10 and var.df == 29
    assert var.per_session == pytest.approx(units.num.var(ddof=1) / 10)
    assert var.min_sessions() == 1
    plan = sessions_for_width(var, 0.2)
    games_needed = var.per_session * 10 * (z_value(0.95) / 0.2) ** 2
    assert plan.expected == math.ceil(games_needed / 10)


def test_sessions_for_width_is_the_smallest_n_with_the_assured_width():
    var = fit(session_units(k=5, seed=2))
    w = 0.1
    plan = sessions_for_width(var, w, 0.95, 0.9)
    z = z_value(0.95)

    def assured(n: int) -> float:
        return z * math.sqrt(f.ppf(0.9, n - 1, 4) * var.per_session / n)

    assert assured(plan.sessions) <= w < assured(plan.sessions - 1)
    assert (
        z * math.sqrt(var.per_session / plan.expected)
        <= w
        < z * math.sqrt(var.per_session / (plan.expected - 1))
    )
    assert plan.sessions > plan.expected  # a 5-session pilot: the assurance costs sessions
    wider = sessions_for_width(var, 2 * w)
    assert wider.sessions < plan.sessions and wider.expected <= math.ceil(plan.expected / 4) + 1


def test_edge_cases_say_why():
    one = fit(session_units(k=1))
    assert not one.known and "needs >= 2" in one.note
    assert sessions_for_width(one, 0.1).sessions is None
    flat = fit(Units.of(np.repeat(np.arange(5), 4), np.ones(20), np.ones(20), "session"))
    plan = sessions_for_width(flat, 0.1)
    assert plan.sessions == 3 and "no variance" in plan.note
    empty = fit(Units.of(np.zeros(4), np.zeros(4), np.zeros(4), "session"))
    assert "denominator is 0" in empty.note
    with pytest.raises(ValueError):
        sessions_for_width(fit(session_units()), 0)


def test_item_design_has_a_floor_that_sessions_cannot_pass():
    rng = np.random.default_rng(0)
    items, k = 20, 6
    item_effect = rng.normal(0, 0.2, items)
    num = np.clip(0.6 + np.tile(item_effect, k) + rng.normal(0, 0.2, items * k), 0, 1)
    units = Units.of(
        np.repeat(np.arange(k), items), num, np.ones(items * k), "item", np.tile(np.arange(items), k)
    )
    var = fit(units)
    assert var.design == "item" and var.items == items and var.floor > 0
    floor_width = z_value(0.95) * math.sqrt(var.floor)
    assert var.half_width(10**6, 0.95) == pytest.approx(floor_width, rel=1e-3)
    blocked = sessions_for_width(var, floor_width * 0.9)
    assert blocked.sessions is None and "items" in blocked.note
    assert sessions_for_width(var, floor_width * 1.5).sessions is not None


def test_power_matches_the_textbook_formula_at_face_value():
    var = fit(session_units(k=200, seed=5))
    plan = sessions_for_power(var, effect=0.2, level=0.95, power=0.8)
    exact = (norm.ppf(0.975) + norm.ppf(0.8)) ** 2 * var.per_session / 0.2**2
    assert plan.expected == math.ceil(exact)
    assert plan.sessions >= plan.expected


def test_a_difference_adds_variances_with_satterthwaite_df():
    a, b = fit(session_units(k=5, seed=1)), fit(session_units(k=9, seed=2, sd_b=1.0))
    d = combine([a, b], [1.0, -1.0])
    assert d.per_session == pytest.approx(a.per_session + b.per_session)
    assert d.estimate == pytest.approx(a.estimate - b.estimate)
    assert min(a.df, b.df) <= d.df <= a.df + b.df
