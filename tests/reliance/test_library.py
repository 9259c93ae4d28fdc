"""Library breadth, quality gates, pairs, support set and the tree export."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil

import numpy as np

from games.reliance.export import write_jsonl
from games.reliance.library import blueprint_ids, id_problems, pair_id, quality_gates
from games.reliance.loader import BLUEPRINT_DIR
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


def test_every_id_kind_is_unique(lib):
    """Scenario, blueprint, pair and support ids are unique; 49 pairs, 9 of them stable (issue 17 item 2)."""
    assert id_problems(lib) == []
    pair_ids = [p.id for p in lib.pairs]
    assert len(pair_ids) == len(set(pair_ids)) == 49
    assert sum(p.stable for p in lib.pairs) == 9
    bids = blueprint_ids()
    assert len(bids) == len(set(bids)) == len({s.blueprint for s in [*lib.main, *lib.specialised]})


def test_a_scenario_with_a_differing_and_a_stable_pair_gets_two_ids(lib):
    both = {}
    for p in lib.pairs:
        both.setdefault((p.scenario, p.stage), set()).add(p.stable)
    shared = [k for k, kinds in both.items() if kinds == {True, False}]
    assert shared, "the library no longer has a scenario with both kinds of pair at one stage"
    for scenario, stage in shared:
        ids = {p.id for p in lib.pairs if (p.scenario, p.stage) == (scenario, stage)}
        assert ids == {pair_id(scenario, stage - 1, False), pair_id(scenario, stage - 1, True)}


def test_validate_reports_every_duplicate_kind(lib, tmp_path, monkeypatch, capsys):
    import games.reliance.__main__ as cli

    broken = dataclasses.replace(
        lib, pairs=[*lib.pairs, lib.pairs[0]], support=[*lib.support, lib.support[0]]
    )
    first = sorted(BLUEPRINT_DIR.glob("*.yaml"))[0]
    shutil.copy(first, tmp_path / first.name)
    shutil.copy(first, tmp_path / ("copy_" + first.name))
    problems = id_problems(broken, blueprint_dir=tmp_path)
    text = "\n".join(problems)
    assert f"duplicate pair id(s): {lib.pairs[0].id}" in text
    assert f"duplicate support scenario id(s): {lib.support[0]}" in text
    assert "duplicate blueprint id(s)" in text
    monkeypatch.setattr(cli, "default_library", lambda: broken)
    assert cli.main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "duplicate pair id(s)" in err and "ok" not in err


def test_validate_says_ok_with_counts(capsys):
    from games.reliance.__main__ import main

    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "49 pairs" in out


def test_readme_and_docs_state_the_counts_validate_prints(lib, capsys):
    from games.reliance.__main__ import main
    from games.reliance.library import library_counts
    from tests.conftest import REPO

    assert main(["validate"]) == 0
    assert capsys.readouterr().out == f"ok: {library_counts(lib)}; ids unique\n"
    main_bps = {s.blueprint for s in lib.main}
    every_bp = main_bps | {s.blueprint for s in lib.specialised}
    assert len(every_bp) == len(set(blueprint_ids()))  # the blueprint files define exactly these
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert (
        f"A library of {len(lib.all)} scenarios: {len(lib.main)} main ({len(main_bps)} blueprints in "
        f"{len({s.category for s in lib.main})} collaboration categories × {len(MAIN_PROCESSES)} interaction "
        f"processes), {len(lib.specialised)} specialised" in readme
    )
    assert f"{len(every_bp)} in all) and {len(lib.fixtures)} worked-example fixtures" in readme
    assert f"`game.set=all` plays the {len(lib.main) + len(lib.specialised)} main and specialised" in readme
    assert f"{len(lib.pairs)} controlled-history pairs and {len(lib.support)} reliability-support" in readme
    docs = " ".join((REPO / "docs" / "reliance.md").read_text(encoding="utf-8").split())
    assert f"{len(lib.all)} scenarios: {len(lib.main)} main ({len(main_bps)} blueprints ×" in docs
