"""Cluster-bootstrap intervals of calibration measures against a naive per-resample loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.calibration import scores
from analysis.calibration.intervals import bootstrap_measures
from analysis.stats import percentile_interval, resample_weights


def _clustered(n_clusters: int = 40, per: int = 25, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    c = np.repeat(np.arange(n_clusters), per)
    shift = rng.normal(0, 0.15, n_clusters)[c]
    p = np.round(rng.uniform(0.05, 0.95, c.size), 2)
    y = (rng.uniform(size=c.size) < np.clip(p + shift, 0, 1)).astype(float)
    return p, y, c


def test_point_estimates_match_scores() -> None:
    p, y, c = _clustered()
    r = bootstrap_measures(p, y, c, n_resamples=50)
    assert r["brier"].estimate == pytest.approx(scores.brier(p, y))
    assert r["log_loss"].estimate == pytest.approx(scores.log_loss(p, y))
    assert r["ece_width"].estimate == pytest.approx(scores.ece(p, y, 10, "width"))
    assert r["ece_mass"].estimate == pytest.approx(scores.ece(p, y, 10, "mass"))
    assert r["bias"].estimate == pytest.approx(scores.bias(p, y))
    m = scores.murphy(p, y)
    assert r["reliability"].estimate == pytest.approx(m.reliability)
    assert r["resolution"].estimate == pytest.approx(m.resolution)
    assert r["uncertainty"].estimate == pytest.approx(m.uncertainty)
    assert r["n"].estimate == p.size


def test_intervals_match_naive_cluster_resampling() -> None:
    p, y, c = _clustered(30, 20, 3)
    r = bootstrap_measures(p, y, c, n_resamples=300, seed=9)
    w = resample_weights(30, 300, 9)
    briers, biases = [], []
    for row in w:
        idx = np.concatenate([np.flatnonzero(c == k) for k in range(30) for _ in range(row[k])])
        briers.append(scores.brier(p[idx], y[idx]))
        biases.append(scores.bias(p[idx], y[idx]))
    assert (r["brier"].low, r["brier"].high) == pytest.approx(percentile_interval(np.array(briers)))
    assert (r["bias"].low, r["bias"].high) == pytest.approx(percentile_interval(np.array(biases)))


def test_clustering_widens_intervals() -> None:
    p, y, c = _clustered(40, 25, 5)
    clustered = bootstrap_measures(p, y, c, n_resamples=400, seed=1)["bias"]
    iid = bootstrap_measures(p, y, np.arange(p.size), n_resamples=400, seed=1)["bias"]
    assert (clustered.high - clustered.low) > (iid.high - iid.low)


def test_few_clusters_give_estimate_without_interval() -> None:
    r = bootstrap_measures([0.2, 0.7, 0.9], [0, 1, 1], ["a", "a", "b"])
    assert r["brier"].estimate == pytest.approx(scores.brier([0.2, 0.7, 0.9], [0, 1, 1]))
    assert math.isnan(r["brier"].low) and "no interval" in r["brier"].note


def test_extra_measure_and_difference() -> None:
    p, y, c = _clustered()
    sq = (np.full(p.size, y.mean()) - y) ** 2
    r = bootstrap_measures(p, y, c, n_resamples=100, extra={"climatology": sq})
    assert r["climatology"].estimate == pytest.approx(sq.mean())
    assert r["climatology_minus_brier"].estimate == pytest.approx(sq.mean() - scores.brier(p, y))


def test_cluster_length_mismatch() -> None:
    with pytest.raises(ValueError, match="clusters has 1 entries"):
        bootstrap_measures([0.1, 0.2], [0, 1], ["a"])
