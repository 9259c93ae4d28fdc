"""Tests of run-directory discovery, manifests, events and tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.rundirs import (
    DataWarning,
    RunDirError,
    discover_runs,
    find_run_dirs,
    read_events,
    read_table,
    read_tables,
)


def _run(path: Path, status: str = "complete", **cell: str) -> Path:
    path.mkdir(parents=True)
    manifest = {"run_id": path.name, "game": "escape_room", "status": status, "cell": cell}
    if status == "failed":
        manifest["failure"] = {"reason": "provider down", "resume": "re-run"}
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def test_discovery_mixes_run_and_sweep_dirs(tmp_path: Path) -> None:
    a = _run(tmp_path / "sweep" / "0", model="m1")
    b = _run(tmp_path / "sweep" / "nested" / "1", model="m2")
    c = _run(tmp_path / "single", model="m3")
    (a / "sub").mkdir()
    (a / "sub" / "manifest.json").write_text("{}")  # inside a run: not searched
    assert find_run_dirs(tmp_path / "sweep") == [a, b]
    found = discover_runs([tmp_path / "sweep", c, a])  # duplicates removed
    assert [r.path for r in found.runs] == [c, a, b] or sorted(r.path for r in found.runs) == sorted(
        [a, b, c]
    )
    assert len(found.runs) == 3


def test_incomplete_runs_excluded_and_reported(tmp_path: Path) -> None:
    _run(tmp_path / "ok")
    _run(tmp_path / "bad", status="failed")
    _run(tmp_path / "live", status="running")
    found = discover_runs([tmp_path])
    assert [r.run_id for r in found.runs] == ["ok"]
    report = found.report()
    assert "status 'failed' (provider down)" in report and "status 'running'" in report
    assert len(discover_runs([tmp_path], include_incomplete=True).runs) == 3


def test_bad_manifest_and_missing_dir(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "manifest.json").write_text("{not json")
    found = discover_runs([tmp_path])
    assert not found.runs and "not valid JSON" in found.report()
    with pytest.raises(RunDirError, match="no such directory"):
        discover_runs([tmp_path / "nope"])


def test_events_read_up_to_damage(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    lines = [json.dumps({"seq": i, "type": "decision"}) for i in range(3)]
    (run / "events.jsonl").write_text("\n".join(lines) + '\n{"seq": 3, "ty')
    with pytest.warns(DataWarning, match=r"events.jsonl:4: damaged event"):
        events = read_events(run)
    assert [e["seq"] for e in events] == [0, 1, 2]


def test_table_gets_cell_keys(tmp_path: Path) -> None:
    run_dir = _run(tmp_path / "r", model="m", schedule="smooth")
    (run_dir / "games.csv").write_text("session,game,schedule\n0,1,smooth\n0,2,smooth\n")
    run = discover_runs([run_dir]).runs[0]
    df = read_table(run, "games.csv")
    assert df is not None
    assert list(df["run_id"]) == ["r", "r"] and list(df["model"]) == ["m", "m"]
    assert read_table(run, "missing.csv") is None
    assert len(read_tables([run, run], "games.csv")) == 4
    (run_dir / "games.csv").write_text("session,game,schedule\n0,1,1strike\n")
    with pytest.warns(DataWarning, match="manifest cell says 'smooth'"):
        read_table(run, "games.csv")
