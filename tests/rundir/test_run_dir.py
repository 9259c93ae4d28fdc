"""Manifest records, table schemas, the writer, and what a job leaves in a reused run directory."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, run_in_process
from trustsim.rundir import (
    PREDICTION_KEYS,
    PREDICTION_MEASURES,
    Manifest,
    RunRecorder,
    TableSchema,
    failure_from_exception,
    prediction_schema,
    write_failed_manifest,
)


def test_failure_record_of_any_exception_is_type_and_one_line(tmp_path: Path) -> None:
    rec = failure_from_exception(ValueError("first line\n  second   line"), resume="fix it")
    assert rec == {"type": "ValueError", "reason": "first line second line", "resume": "fix it"}
    assert failure_from_exception(KeyError())["reason"] == "KeyError"
    assert failure_from_exception(KeyboardInterrupt())["reason"] == "interrupted"
    assert len(failure_from_exception(RuntimeError("x" * 5000))["reason"]) <= 500
    write_failed_manifest(tmp_path, OSError("disk full"), "free space", config={"seed": 1})
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["status"] == "failed" and data["failure"]["type"] == "OSError"
    assert data["config"] == {"seed": 1} and data["timings"]["finished"]


def test_manifest_keeps_the_documented_field_order(tmp_path: Path) -> None:
    m = Manifest(tmp_path, config={"a": 1}, run_id="r-1", game="g", extra_field=1)
    m.note("hello")
    m.finish("complete", counts={"games": 2}, tables={"games": 2}, llm=None)
    data = json.loads((tmp_path / "manifest.json").read_text())
    keys = list(data)
    assert keys[:5] == ["trustsim_version", "run_id", "run_dir", "game", "status"]
    assert keys.index("config") < keys.index("timings") < keys.index("tables") < keys.index("extra_field")
    assert data["status"] == "complete" and data["counts"] == {"games": 2} and data["notes"] == ["hello"]
    assert data["llm"]["calls_sent"] == 0  # None leaves the field as it was


def test_one_prediction_schema_everywhere() -> None:
    """The calibration table is built in one place (trustsim.rundir.prediction_schema): its key and measure
    columns around a game's own cell columns; no module of games/ or trustsim/ builds a TableSchema named
    predictions itself."""
    built = []
    for path in [*REPO.glob("games/**/*.py"), *REPO.glob("trustsim/**/*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TableSchema" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and first.value == "predictions":
                    built.append(path.relative_to(REPO).as_posix())
    assert built == ["trustsim/rundir/schema.py"]
    schema = prediction_schema(cell=("a", "b"))
    assert schema.columns == (*PREDICTION_KEYS, "a", "b", *PREDICTION_MEASURES)
    assert schema.file == "predictions.csv" and prediction_schema().columns == (
        *PREDICTION_KEYS,
        *PREDICTION_MEASURES,
    )


def test_rundir_imports_nothing_heavy() -> None:
    code = (
        "import sys, trustsim.rundir, analysis.rundirs; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mesa','hydra','litellm','games','agents',"
        "'omegaconf','pandas'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_recorder_writes_schema_tables_and_contiguous_events(tmp_path: Path) -> None:
    rec = RunRecorder(tmp_path)
    schema = TableSchema("things", ("a", "b", "c"))
    rec.table(schema).write_rows([{"a": True, "b": 0.1 + 0.2, "c": None}, {"a": 1, "b": "x", "z": 9}])
    rec.event("one", x=(1, 2))
    rec.event("two")
    rec.close()
    assert (tmp_path / "things.csv").read_text() == "a,b,c\ntrue,0.3,\n1,x,\n"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert events == [{"seq": 0, "type": "one", "x": [1, 2]}, {"seq": 1, "type": "two"}]
    assert rec.table_rows() == {"things": 2}


def test_tables_hold_no_latency(run_job_dir) -> None:
    """A fresh-store rerun is byte-identical: latency lives in events.jsonl and the manifest only."""
    code, run = run_job_dir(["+experiment=mid2strike", "agent=bayes", "progress=false"])
    assert code == 0
    for table in run.glob("*.csv"):
        assert "latency_s" not in table.read_text().splitlines()[0].split(","), table.name


def test_reusing_a_run_directory_for_another_game_clears_the_old_tables(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "reused"
    assert run_in_process(["+experiment=ipd", "progress=false"], run_dir) == 0
    assert (run_dir / "moves.csv").exists()
    capsys.readouterr()
    assert run_in_process(["+experiment=mid2strike", "agent=bayes", "progress=false"], run_dir) == 0
    err = capsys.readouterr().err
    assert f"{run_dir} held a previous run (ipd-" in err and "moves.csv" in err and "matches.csv" in err
    names = sorted(p.name for p in run_dir.glob("*.csv"))
    assert names == ["agent_games.csv", "decisions.csv", "games.csv", "predictions.csv"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["game"] == "escape_room" and "moves.csv" in manifest["notes"][0]
    assert set(manifest["tables"]) == {"decisions", "games", "agent_games", "predictions"}
