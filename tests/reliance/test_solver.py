"""Solver checks: Monte Carlo rollouts reproduce Q*, beliefs normalise, V* ≤ Q*, regret and benefit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.reliance.loader import load_all
from games.reliance.rules import parse_scenario
from games.reliance.solver import rollout, solve


@pytest.fixture(scope="module")
def library():
    return load_all()


def _mc_check(sol, node, rng, n=500):
    for a in node.actions:
        costs = np.array([rollout(sol, node, a, rng) for _ in range(n)])
        se = costs.std(ddof=1) / math.sqrt(n)
        assert abs(costs.mean() - node.qof(a)) <= 4.5 * se + 1e-9, (sol.scenario.id, node.id, a)


def test_monte_carlo_reproduces_q_star(library):
    rng = np.random.default_rng(20261130)
    picked = library[:: max(1, len(library) // 24)]
    assert len(picked) >= 15
    for scn in picked:
        sol = solve(scn)
        _mc_check(sol, sol.root, rng)
        inner = sol.nodes[int(rng.integers(1, len(sol.nodes)))]
        _mc_check(sol, inner, rng, n=300)


@st.composite
def random_scenario(draw):
    prob = st.floats(0.0, 1.0)
    n_ch = draw(st.integers(1, 2))
    names = ["P", "Q"][:n_ch]
    channels = {
        n: {
            "prior": {"good": (p := draw(prob)), "bad": 1 - p},
            "success": {"good": draw(prob), "bad": draw(prob)},
        }
        for n in names
    }
    actions = {
        f"delegate_{n}": {
            "rely": [n],
            "feedback": draw(st.sampled_from(["channels", "none"])),
            "delay": draw(st.integers(0, 1)),
        }
        for n in names
    }
    if n_ch == 2:
        actions["both"] = {
            "rely": names,
            "combine": draw(st.sampled_from(["conjunctive", "disjunctive"])),
            "feedback": draw(st.sampled_from(["channels", "joint"])),
            "common_fail": draw(st.floats(0, 0.3)),
        }
    actions["backup"] = {"kind": "backup", "fee": draw(st.floats(0, 8)), "success_prob": 1.0}
    actions["test_P"] = {
        "kind": "test",
        "fee": draw(st.floats(0, 1)),
        "signal": {"channel": "P", "pass": {"good": draw(prob), "bad": draw(prob)}},
        "counterpart": "skip",
    }
    actions["support_P"] = {
        "kind": "support",
        "fee": draw(st.floats(0, 1)),
        "effects": [{"channel": "P", "kernel": {"bad": {"good": (s := draw(prob)), "bad": 1 - s}}}],
    }
    actions["skip"] = {"kind": "skip"}
    jobs = [a for a in actions if a not in ("test_P", "support_P", "skip")]
    stages = [{"loss": 0, "actions": ["test_P", "support_P", "skip"]}] + [
        {"loss": draw(st.floats(0.5, 20)), "actions": jobs} for _ in range(2)
    ]
    trans = [
        {"after": 2, "channel": "P", "kernel": {"keep": draw(prob), "redraw": {"good": 0.5, "bad": 0.5}}}
    ]
    return parse_scenario(
        {
            "id": "h",
            "category": "c",
            "setting": "s",
            "channels": channels,
            "actions": actions,
            "stages": stages,
            "transitions": trans,
        }
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenario())
def test_beliefs_normalise_and_v_is_min_q(scn):
    sol = solve(scn)
    for node in sol.nodes:
        assert node.belief.min() >= -1e-12
        assert node.belief.sum() == pytest.approx(1.0, abs=1e-9)
        assert np.all(node.v <= node.q + 1e-12)
        assert node.v == pytest.approx(node.q.min())
        assert node.imm.min() >= -1e-12  # no negative costs anywhere
        for br in node.branches:
            assert sum(p for _, p, _ in br) == pytest.approx(1.0, abs=1e-9)
        for a in node.actions:
            r = node.regret(a)
            assert math.isnan(r) or -1e-12 <= r <= 1 + 1e-12
    assert sol.adaptation_value() >= -1e-9
    b = sol.test_benefit(sol.root, "test_P")
    assert b is not None and b >= -1e-9  # information never hurts before its fee


def test_zero_value_test_has_zero_benefit():
    """A test whose result cannot change any later decision has B = 0."""
    scn = parse_scenario(
        {
            "id": "z", "category": "c", "setting": "s",
            "channels": {"P": {"prior": {"good": 0.9, "bad": 0.1}, "success": {"good": 0.99, "bad": 0.95}}},
            "actions": {
                "test_P": {"kind": "test", "fee": 0.5, "signal": {"channel": "P", "pass": {"good": 0.8, "bad": 0.3}}, "counterpart": "skip"},
                "skip": {"kind": "skip"},
                "delegate": {"rely": ["P"], "feedback": "channels"},
                "backup": {"kind": "backup", "fee": 5, "success_prob": 1},
            },
            "stages": [{"loss": 0, "actions": ["test_P", "skip"]}, {"loss": 10, "actions": ["delegate", "backup"]}],
        }
    )  # fmt: skip
    sol = solve(scn)
    assert abs(sol.test_benefit(sol.root, "test_P")) < 1e-8
    assert sol.root.optimal == ("skip",)
    assert sol.adaptation_value() == pytest.approx(0.0, abs=1e-12)
