"""Library breadth, quality gates, pairs, support set and the tree export."""

from __future__ import annotations

import io
import json

import numpy as np

from games.reliance.export import write_jsonl
from games.reliance.library import quality_gates
from games.reliance.processes import MAIN_PROCESSES, SPECIAL_PROCESSES


def test_library_counts(lib):
    counts = quality_gates(lib)["counts"]
    assert counts["main"] >= 300
    assert counts["blueprints"] >= 70
    assert counts["categories"] >= 20
    assert {s.process for s in lib.main} == set(MAIN_PROCESSES)
    assert counts["specialised"] >= 24
    assert {s.process for s in lib.specialised} == set(SPECIAL_PROCESSES)
    assert counts["pairs"] >= 36
    assert counts["stable_pairs"] >= 5
    assert counts["support"] >= 24
    assert all(len(s.stages) == 3 for s in [*lib.main, *lib.specialised])
    ids = [s.id for s in lib.all]
    assert len(ids) == len(set(ids))


def test_every_blueprint_crossed_with_every_main_process(lib):
    by_bp: dict[str, set[str]] = {}
    for s in lib.main:
        by_bp.setdefault(s.blueprint, set()).add(s.process)
    assert all(p == set(MAIN_PROCESSES) for p in by_bp.values())


def test_setting_texts_are_distinct(lib):
    settings = {s.blueprint: s.setting for s in [*lib.main, *lib.specialised]}
    openings = [t.split(".")[0] for t in settings.values()]
    assert len(set(openings)) == len(openings)


def test_quality_gates_pass(lib):
    report = quality_gates(lib)
    failing = {k: g for k, g in report["gates"].items() if not g["pass"]}
    assert not failing
    assert report["all_pass"]


def test_pairs_are_controlled(lib):
    n_diff = 0
    for p in lib.pairs:
        a = lib.node_at(p.scenario, p.history("a"))
        b = lib.node_at(p.scenario, p.history("b"))
        assert p.obs_a[:-1] == p.obs_b[:-1] and p.obs_a[-1] != p.obs_b[-1]
        assert len(a.optimal) == 1 and len(b.optimal) == 1
        assert (a.optimal == b.optimal) == p.stable
        assert not np.allclose(a.belief, b.belief)
        n_diff += not p.stable
    assert n_diff > len(lib.pairs) / 2


def test_support_scenarios_are_main_scenarios_from_distinct_blueprints(lib):
    main = {s.id: s for s in lib.main}
    assert all(s in main for s in lib.support)
    assert len({main[s].blueprint for s in lib.support}) == len(lib.support)


def test_tree_export_round_trips(lib):
    sol = lib.solution("worked_example")
    buf = io.StringIO()
    assert write_jsonl([sol], buf) == len(sol.nodes)
    recs = [json.loads(line) for line in buf.getvalue().splitlines()]
    root = recs[0]
    assert root["optimal"] == ["delegate"]
    q = {a["action"]: a["q"] for a in root["actions"]}
    assert abs(q["delegate"] - 6.6296) < 1e-12
    for rec in recs:
        for a in rec["actions"]:
            assert abs(sum(p for _, p, _ in a["branches"]) - 1) < 1e-9
