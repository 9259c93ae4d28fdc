"""A run never overwrites a user's files: a ``hydra.run.dir`` (or ``hydra.sweep.dir``, or a sweep's job folder)
holding files no trustsim run wrote is refused with exit 2 before anything is written there, and no run writes
into the working directory itself or into ``/``. A trustsim run directory (a finished run, an interrupted one)
is reused: re-running the same command resumes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from trustsim import api
from trustsim.rundir import RunDirForeign, check_run_dir, check_sweep_dir, foreign_files

from .helpers import TRACEBACK, run_batch

BAYES = ["+experiment=mid2strike", "agent=bayes", "game.games=1", "progress=false"]
USER_FILES = {
    "decisions.csv": "my,own\n1,2\n",
    "games.csv": "game\n7\n",
    "events.jsonl": '{"mine": true}\n',
}


def _user_folder(path: Path, files: dict[str, str] = USER_FILES) -> dict[str, tuple[bytes, int]]:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return _state(path)


def _state(path: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``path``: its bytes and mtime (a refused run must change neither, nor add a file)."""
    return {
        p.relative_to(path).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_foreign_files_tell_a_users_folder_from_a_run_directory(tmp_path: Path) -> None:
    assert foreign_files(tmp_path / "missing") == [] and foreign_files(tmp_path) == []
    _user_folder(tmp_path / "user")
    assert foreign_files(tmp_path / "user") == ["decisions.csv", "events.jsonl", "games.csv"]
    run = tmp_path / "run"  # what a finished job leaves, plus its Hydra record and log
    _user_folder(run / ".hydra", {"config.yaml": "", "overrides.yaml": ""})
    _user_folder(run, {"decisions.csv": "", "games.csv": "", "events.jsonl": "", "__main__.log": ""})
    (run / "manifest.json").write_text(
        json.dumps({"trustsim_version": "0", "tables": {"decisions": 0, "games": 0}})
    )
    assert foreign_files(run) == []
    _user_folder(run / "report", {"report.md": "", ".analysis-files.json": '{"trust": ["report.md"]}'})
    assert foreign_files(run) == []  # an analysis written into the run directory is trustsim's
    (run / "report" / "mine.txt").write_text("mine")
    assert foreign_files(run) == ["report/mine.txt"]
    (run / "report" / "mine.txt").unlink()
    (run / "notes.txt").write_text("mine")
    (run / "agent_games.csv").write_text("")  # not one of the listed tables
    assert foreign_files(run) == ["agent_games.csv", "notes.txt"]
    killed = tmp_path / "killed"  # a job killed before its manifest listed its tables: every *.csv is its own
    _user_folder(killed, {"decisions.csv": "", "games.csv": "", "events.jsonl": ""})
    (killed / "manifest.json").write_text(json.dumps({"trustsim_version": "0", "status": "running"}))
    assert foreign_files(killed) == []
    (killed / "manifest.json").write_text(json.dumps({"status": "running"}))  # not trustsim's
    assert foreign_files(killed) == ["decisions.csv", "events.jsonl", "games.csv", "manifest.json"]


def test_the_working_directory_and_the_root_are_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("", ".", str(tmp_path), "/", "/.."):
        with pytest.raises(RunDirForeign, match="never writes there"):
            check_run_dir(folder)
        with pytest.raises(RunDirForeign, match="never writes there"):
            check_sweep_dir(folder)
    sweep = tmp_path / "sweep"
    _user_folder(sweep / "000_seed=0", {"anything": ""})  # job folders are checked by their jobs
    (sweep / "jobs.csv").write_text("")
    check_sweep_dir(sweep)
    (sweep / "thesis.tex").write_text("")
    with pytest.raises(RunDirForeign, match=r"thesis\.tex"):
        check_sweep_dir(sweep)


def test_api_run_into_a_users_folder_writes_nothing(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "mine"
    before = _user_folder(folder)
    result = api.run(None, BAYES, run_dir=folder)
    assert result.exit_code == 2
    err = capsys.readouterr().err
    assert str(folder) in err and "no trustsim run wrote" in err and "decisions.csv" in err
    assert _state(folder) == before


@pytest.mark.slow
def test_cli_refuses_users_folders_root_and_working_directory(tmp_path: Path) -> None:
    """One interpreter runs every invocation (tests/drills/cli_batch.py), from ``work`` as the working folder."""
    work = tmp_path / "work"
    mine, sweep_mine = tmp_path / "mine", tmp_path / "sweep-mine"
    before = _user_folder(mine)
    sweep_before = _user_folder(sweep_mine, {"results.csv": "x\n1\n"})
    work.mkdir()
    cases = [
        {"args": [*BAYES, f"hydra.run.dir={mine}"]},
        {"args": [*BAYES, "hydra.run.dir=/"]},
        {"args": [*BAYES, "hydra.run.dir="]},
        {"args": [*BAYES, "hydra.run.dir=."]},
        {"args": [*BAYES, f"hydra.run.dir={work}/${{name}}/.."]},  # resolves to the working directory
        {"args": ["-m", *BAYES, "seed=0,1", f"hydra.sweep.dir={sweep_mine}"]},
    ]
    root_before = sorted(os.listdir("/"))
    results = run_batch(cases, work)
    for case, res in zip(cases, results, strict=True):
        assert res["code"] == 2, (case, res)
        assert TRACEBACK not in res["stderr"], res["stderr"]
        assert "config error at 'hydra." in res["stderr"], res["stderr"]
    assert f"{mine} is not a trustsim run directory" in results[0]["stderr"]
    assert "decisions.csv" in results[0]["stderr"] and "move those files away" in results[0]["stderr"]
    assert "filesystem root" in results[1]["stderr"]
    assert all("working directory itself" in r["stderr"] for r in results[2:5])
    assert "results.csv" in results[5]["stderr"] and str(sweep_mine) in results[5]["stderr"]
    assert _state(mine) == before and _state(sweep_mine) == sweep_before
    assert sorted(p.name for p in work.iterdir()) == ["cases.json", "results.json"]  # the batch's own
    assert sorted(os.listdir("/")) == root_before


@pytest.mark.slow
def test_rerun_resumes_in_its_own_directory_and_sweep_job_folders_are_checked(tmp_path: Path) -> None:
    work, run_dir, sweep = tmp_path / "work", tmp_path / "run", tmp_path / "sweep"
    sweep_args = ["-m", *BAYES, "seed=0,1", f"hydra.sweep.dir={sweep}"]
    first = run_batch([{"args": [*BAYES, f"hydra.run.dir={run_dir}"]}, {"args": sweep_args}], work)
    assert [r["code"] for r in first] == [0, 0], first
    tables = {p.name: p.read_bytes() for p in run_dir.glob("*.csv")}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.pop("tables")  # as a job killed mid-run leaves it
    manifest["status"] = "running"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    (job,) = [p for p in sweep.iterdir() if p.is_dir() and p.name.startswith("001_")]
    again = run_batch([{"args": [*BAYES, f"hydra.run.dir={run_dir}"]}, {"args": sweep_args}], work)
    assert [r["code"] for r in again] == [0, 0], again
    assert {p.name: p.read_bytes() for p in run_dir.glob("*.csv")} == tables
    (job / "my_notes.md").write_text("mine")
    job_before = _state(job)
    (refused,) = run_batch([{"args": sweep_args}], work)
    assert refused["code"] == 2, refused
    assert (
        f"{job} is not a trustsim run directory" in refused["stderr"] and "my_notes.md" in refused["stderr"]
    )
    assert "nothing was run" in refused["stderr"]
    assert _state(job) == job_before


def test_extract_out_into_a_users_folder_is_refused_before_any_request(tmp_path: Path, capsys) -> None:
    from trustsim.extract.__main__ import _main

    before = _user_folder(tmp_path / "mine", {"predictions.csv": "mine\n"})
    assert _main([str(tmp_path / "no-logs"), "--out", str(tmp_path / "mine")]) == 2
    err = capsys.readouterr().err
    assert "config error at '--out'" in err and "predictions.csv" in err and "--out outputs/my-run" in err
    assert _state(tmp_path / "mine") == before
