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
    scan_events,
)
from games.escape_room.plan import UNIT as ESCAPE_ROOM_UNIT

UNIT = ESCAPE_ROOM_UNIT.events.to_dict()  # as an escape-room run's manifest records it


def _run(path: Path, status: str = "complete", **cell: str) -> Path:
    path.mkdir(parents=True)
    manifest = {"run_id": path.name, "game": "escape_room", "unit": UNIT, "status": status, "cell": cell}
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


# -- duplicates, the damage rule, output folders ------------------------------------------------------------
def test_duplicates_by_run_id_and_config_hash(tmp_path: Path) -> None:
    for name, rid, chash in (("a", "r1", "h1"), ("b", "r1", "h1"), ("c", "r1", "h2"), ("d", "r2", "h1")):
        path = _run(tmp_path / name)
        (path / "manifest.json").write_text(
            json.dumps({"run_id": rid, "config_hash": chash, "game": "escape_room", "status": "complete"})
        )
    with pytest.warns(DataWarning, match=r"dropped 1 duplicate run\(s\)"):
        found = discover_runs([tmp_path])
    assert [r.path.name for r in found.runs] == ["a", "c", "d"]
    assert found.duplicates == [(tmp_path / "b", tmp_path / "a", "r1")]
    assert "duplicate of run r1" in found.report() and "1 duplicate(s) dropped" in found.summary()


def test_duplicate_keeps_the_complete_copy(tmp_path: Path) -> None:
    for name, status in (("a", "failed"), ("b", "complete")):
        path = _run(tmp_path / name, status=status)
        data = json.loads((path / "manifest.json").read_text())
        (path / "manifest.json").write_text(json.dumps({**data, "run_id": "same", "config_hash": "h"}))
    with pytest.warns(DataWarning):
        found = discover_runs([tmp_path], include_incomplete=True)
    assert [r.path.name for r in found.runs] == ["b"]


def _events(path: Path, types: list[tuple[str, dict]]) -> None:
    lines = [json.dumps({"seq": i, "type": t, **f}, separators=(",", ":")) for i, (t, f) in enumerate(types)]
    (path / "events.jsonl").write_text("\n".join(lines) + "\n")


def test_scan_finds_units_and_damage(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    games = []
    for g in (1, 2, 3):
        games += [("game_start", {"session": 0, "game": g}), ("decision", {"session": 0, "game": g})]
        games += [("game_end", {"session": 0, "game": g})]
    _events(run, [("run_start", {}), *games, ("run_end", {})])
    found = discover_runs([run]).runs[0]
    scan = scan_events(found)
    assert scan.ok and scan_events(found, full=True).ok
    lines = (run / "events.jsonl").read_text().splitlines()
    lines[5] = lines[5][:10]  # game 2's decision is cut: only game 2 is lost
    lines.insert(
        10, json.dumps({"seq": 99, "type": "noise"}, separators=(",", ":"))
    )  # seq break after game 3
    (run / "events.jsonl").write_text("\n".join(lines) + "\n")
    scan = scan_events(found)
    assert [line for line, _ in scan.damaged] == [6, 11]  # the cut line and the foreign one
    assert scan.intact_units() == {"s0/1", "s0/3"}
    games_csv = "session,game\n0,1\n0,2\n0,3\n"
    (run / "games.csv").write_text(games_csv)
    with pytest.warns(DataWarning, match=r"events.jsonl:6: damaged event.*using the 2 of 3 game\(s\)"):
        df = read_tables([found], "games.csv", cell_keys=False)
    assert list(df["game"]) == [1, 3]
    # a run directory written before manifests recorded the unit: the file-level rule (every row, warned)
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["unit"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    old = discover_runs([run]).runs[0]
    assert old.unit is None and scan_events(old).unit is None
    with pytest.warns(DataWarning, match=r"using all 3 row\(s\).*cannot be checked per unit"):
        df = read_tables([old], "games.csv", cell_keys=False)
    assert list(df["game"]) == [1, 2, 3]


def test_print_data_warnings_prints_each_once(capsys) -> None:
    import warnings

    from analysis.rundirs import print_data_warnings

    with print_data_warnings() as shown:
        for _ in range(3):
            warnings.warn("file.csv:3: bad row", DataWarning, stacklevel=1)
    assert capsys.readouterr().err == "warning: file.csv:3: bad row\n" and shown.messages == [
        "file.csv:3: bad row"
    ]


ENGINE = {
    "trust": ["+experiment=mid2strike", "agent=bayes", "runs=3", "progress=false"],
    "calibration": ["+experiment=ipd", "runs=3", "game.opponent=random", "progress=false"],
    "arena": ["+experiment=ipd", "runs=3", "game.opponent=random", "progress=false"],
    "reliance": ["+experiment=reliance", "runs=3", "game.limit=12", "agent=random", "progress=false"],
}
ARGS = {
    "trust": ["--resamples", "30", "--no-figures"],
    "calibration": ["--resamples", "10"],
    "arena": ["--resamples", "10"],
    "reliance": ["--resamples", "20", "--no-figures"],
}
FIRST_TABLE = {
    "trust": "cells.csv",
    "calibration": "summary.csv",
    "arena": "tournament.csv",
    "reliance": None,
}


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.conftest import run_in_process

    root = tmp_path_factory.mktemp("engine")
    made: dict[tuple[str, ...], Path] = {}
    out = {}
    for cmd, over in ENGINE.items():
        key = tuple(over)
        if key not in made:
            assert run_in_process(over, root / cmd) == 0
            made[key] = root / cmd
        out[cmd] = made[key]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("command", list(ENGINE))
def test_a_rerun_is_counted_once(command: str, engine_runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    """Issue 17 item 1: the same run in two directories (a re-run into a new timestamped directory) is
    counted once, and the subcommand says how many duplicates it dropped."""
    import shutil

    from analysis.__main__ import main

    once, twice = tmp_path / "once", tmp_path / "twice"
    shutil.copytree(engine_runs[command], once / "2026-01-01_run")
    shutil.copytree(engine_runs[command], twice / "2026-01-01_run")
    shutil.copytree(engine_runs[command], twice / "2026-01-02_rerun")
    assert main([command, str(once), "--out", str(tmp_path / "r1"), *ARGS[command]]) == 0
    capsys.readouterr()
    assert main([command, str(twice), "--out", str(tmp_path / "r2"), *ARGS[command]]) == 0
    text = "".join(capsys.readouterr())
    assert "dropped 1 duplicate run(s)" in text and "2026-01-02_rerun (duplicate of" in text
    files = sorted(p.name for p in (tmp_path / "r1").iterdir() if p.suffix == ".csv")
    assert files and files == sorted(p.name for p in (tmp_path / "r2").iterdir() if p.suffix == ".csv")
    for name in files:  # every table is the same as with the run given once
        if name != "runs.csv":
            assert (tmp_path / "r1" / name).read_bytes() == (tmp_path / "r2" / name).read_bytes(), name


def _trust(out: Path, src: Path, *extra: str) -> int:
    from analysis.__main__ import main

    return main(["trust", str(src), "--out", str(out), "--resamples", "30", "--quiet", *extra])


@pytest.mark.slow
def test_out_folder_is_cleared_of_the_previous_analysis(tmp_path: Path, capsys) -> None:
    from tests.analysis.synth import write_run

    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", schedule="2strike", n_games=6, seed=i)
    out = tmp_path / "report"
    assert _trust(out, tmp_path / "in") == 0
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures
    capsys.readouterr()
    assert _trust(out, tmp_path / "in", "--no-figures") == 0
    assert not list(out.glob("*.png"))  # no stale figure next to a report that skipped them
    assert "removed" in capsys.readouterr().err and (out / "report.md").exists()
    record = json.loads((out / ".analysis-files.json").read_text())
    assert "report.md" in record["trust"] and not any(f.endswith(".png") for f in record["trust"])


@pytest.mark.slow
def test_out_folder_with_foreign_files_needs_force(tmp_path: Path, capsys) -> None:
    from tests.analysis.synth import write_run

    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", n_games=3, seed=i)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert _trust(out, tmp_path / "in") == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and "notes.txt" in err and "--force" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert _trust(out, tmp_path / "in", "--force") == 0
    assert (out / "notes.txt").read_text() == "keep me" and (out / "report.md").exists()
    assert _trust(out, tmp_path / "in") == 2  # still foreign: refused again without --force


def test_another_subcommands_report_is_refused(tmp_path: Path, capsys) -> None:
    from analysis.__main__ import main
    from tests.analysis.synth import write_run

    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", n_games=3, seed=i)
    out = tmp_path / "report"
    assert _trust(out, tmp_path / "in", "--no-figures") == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    yardstick = ["yardstick", str(tmp_path / "in")]
    assert main([*yardstick, "--out", str(out)]) == 2  # its report.md would replace trust's
    err = capsys.readouterr().err
    assert "analysis trust" in err and "nothing was changed" in err and f"{out / 'yardstick'}/" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert main([*yardstick, "--out", str(out / "yardstick")]) == 0  # a folder of its own
    assert _trust(out, tmp_path / "in", "--no-figures") == 0  # the nested report is not foreign
    assert (out / "report.md").read_bytes() == before[out / "report.md"]
    assert (out / "yardstick" / "report.md").exists()


def test_force_writes_two_subcommands_into_one_folder(tmp_path: Path) -> None:
    from analysis.outdir import OutDirError, owned_output

    out = tmp_path / "out"
    with owned_output(out, "trust"):
        (out / "a.csv").write_text("1")
    with pytest.raises(OutDirError, match="analysis trust"), owned_output(out, "calibration"):
        pass
    with owned_output(out, "calibration", force=True):
        (out / "b.csv").write_text("2")
    with owned_output(out, "trust", force=True):  # trust's a.csv is replaced, calibration's b.csv stays
        (out / "c.csv").write_text("3")
    assert sorted(p.name for p in out.glob("*.csv")) == ["b.csv", "c.csv"]


def test_a_refused_out_folder_is_left_exactly_as_it_was(tmp_path: Path, capsys) -> None:
    from tests.analysis.synth import write_run

    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", n_games=3, seed=i)
    out = tmp_path / "report"
    assert _trust(out, tmp_path / "in", "--no-figures") == 0
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("keep me")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert len(before) > 5
    capsys.readouterr()
    # the foreign notes/mine.txt is refused before anything is touched
    assert _trust(out, tmp_path / "in", "--no-figures") == 2
    err = capsys.readouterr().err
    assert "notes/mine.txt" in err and "nothing was changed" in err and "removed" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_nested_analysis_folder_is_not_foreign(tmp_path: Path, capsys) -> None:
    from analysis.__main__ import main
    from tests.analysis.synth import write_run

    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", n_games=3, seed=i)
    out = tmp_path / "report"
    assert _trust(out, tmp_path / "in", "--no-figures") == 0
    assert main(["yardstick", str(tmp_path / "in"), "--out", str(out / "yardstick")]) == 0
    nested = sorted(p.relative_to(out) for p in (out / "yardstick").rglob("*") if p.is_file())
    assert any(p.name == "report.md" for p in nested)
    capsys.readouterr()
    # the documented order (docs/reference_study.md): trust, yardstick into report/yardstick/, trust again
    assert _trust(out, tmp_path / "in", "--no-figures") == 0
    assert "error" not in capsys.readouterr().err
    assert (out / "report.md").exists()
    assert sorted(p.relative_to(out) for p in (out / "yardstick").rglob("*") if p.is_file()) == nested
