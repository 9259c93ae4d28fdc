"""`python -m games.reliance` commands."""

from __future__ import annotations

import json

from games.reliance.__main__ import main


def test_inspect_prints_the_tree_and_values(capsys):
    assert main(["inspect", "worked_example", "--no-rules"]) == 0
    out = capsys.readouterr().out
    assert "V* = 6.6296" in out and "Q*=7.0000" in out and "component X failed (p=0.2800)" in out


def test_inspect_unknown_scenario_suggests_ids(capsys):
    assert main(["inspect", "worked"]) == 2
    assert "worked_example" in capsys.readouterr().err


def test_explore_and_gates(tmp_path, capsys):
    out = tmp_path / "trees.jsonl"
    assert main(["explore", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) > 10_000
    first = json.loads(lines[0])
    assert {"scenario", "node", "stage", "posterior", "v", "optimal", "actions"} <= set(first)
    capsys.readouterr()
    assert main(["gates"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all_pass"] is True
