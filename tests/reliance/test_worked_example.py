"""The worked example of specs/reliance.md: every number of the spec, computed by the solver."""

from __future__ import annotations

import copy

import pytest
import yaml

from games.reliance.loader import SCENARIO_DIR, load_scenario_file
from games.reliance.rules import parse_scenario
from games.reliance.solver import solve

FILE = SCENARIO_DIR / "worked_example.yaml"


@pytest.fixture(scope="module")
def scenarios():
    return {s.id: s for s in load_scenario_file(FILE)}


def test_posterior_before_the_change():
    raw = yaml.safe_load(FILE.read_text())["scenarios"][0]
    no_change = copy.deepcopy(raw)
    no_change["transitions"] = []
    sol = solve(parse_scenario(no_change, str(FILE)))
    m = sol.compiled.marginals
    after_success = sol.child(sol.root, "delegate", "X:success")
    after_failure = sol.child(sol.root, "delegate", "X:failure")
    assert m(after_success.belief)["X"]["good"] == pytest.approx(0.875, abs=1e-12)
    assert m(after_failure.belief)["X"]["good"] == pytest.approx(0.25, abs=1e-12)


def test_every_number_of_the_worked_example(scenarios):
    sol = solve(scenarios["worked_example"])
    root = sol.root
    m = sol.compiled.marginals
    ok = sol.child(root, "delegate", "X:success")
    bad = sol.child(root, "delegate", "X:failure")
    assert m(ok.belief)["X"]["good"] == pytest.approx(0.725, abs=1e-12)
    assert sol.success_prob(ok, "delegate") == pytest.approx(0.735, abs=1e-12)
    assert ok.qof("delegate") == pytest.approx(3.18, abs=1e-12)
    assert ok.qof("backup") == pytest.approx(3.5, abs=1e-12)
    assert ok.optimal == ("delegate",)
    assert m(bad.belief)["X"]["good"] == pytest.approx(0.35, abs=1e-12)
    assert sol.success_prob(bad, "delegate") == pytest.approx(0.51, abs=1e-12)
    assert bad.qof("delegate") == pytest.approx(5.88, abs=1e-12)
    assert bad.optimal == ("backup",)
    assert root.qof("delegate") == pytest.approx(6.6296, abs=1e-12)
    assert root.qof("backup") == pytest.approx(7.00, abs=1e-12)
    assert root.imm[root.actions.index("delegate")] == pytest.approx(3.36, abs=1e-12)
    assert {k: p for k, p, _ in root.branch("delegate")}["X:success"] == pytest.approx(0.72)
    assert root.optimal == ("delegate",)
    assert root.regret("backup") == pytest.approx(1.0)


def test_independent_y_job_gives_a_stable_pair(scenarios):
    sol = solve(scenarios["worked_example_y"])
    m = sol.compiled.marginals
    after_x = sol.child(sol.root, "delegate_X", "X:success")
    assert after_x.optimal == ("delegate_Y",)
    y_ok = sol.child(after_x, "delegate_Y", "Y:success")
    y_bad = sol.child(after_x, "delegate_Y", "Y:failure")
    for node in (y_ok, y_bad):
        assert m(node.belief)["X"]["good"] == pytest.approx(0.725, abs=1e-12)
        assert node.optimal == ("delegate_X",)
        assert node.qof("delegate_X") == pytest.approx(3.18, abs=1e-12)
    assert m(y_ok.belief)["Y"]["good"] == pytest.approx(0.875, abs=1e-12)
    assert m(y_bad.belief)["Y"]["good"] == pytest.approx(0.25, abs=1e-12)
