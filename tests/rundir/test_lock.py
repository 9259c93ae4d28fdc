"""The run-directory lock: one job per directory, a busy directory fails at once, stale locks are taken over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_in_process
from trustsim.rundir import LOCK, RunDirBusy, RunDirLock, open_run_dir

ESCAPE = ["+experiment=mid2strike", "agent=bayes", "progress=false"]


def test_second_lock_fails_naming_directory_and_holder(tmp_path: Path) -> None:
    with RunDirLock(tmp_path, command="job-a"):
        holder = json.loads((tmp_path / LOCK).read_text())
        assert holder["pid"] == os.getpid() and holder["command"] == "job-a"
        with pytest.raises(RunDirBusy) as err:
            RunDirLock(tmp_path).acquire()
        msg = str(err.value)
        assert (
            str(tmp_path) in msg and f"pid {os.getpid()}" in msg and holder["host"] in msg and "job-a" in msg
        )
        assert err.value.exit_code == 5
    assert not (tmp_path / LOCK).exists()  # released: the file is gone
    with RunDirLock(tmp_path) as again:  # and the directory is free again
        assert again.held and again.note is None


def test_stale_lock_of_a_dead_process_is_taken_over_with_a_note(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    pid = int(dead.stdout)
    (tmp_path / LOCK).write_text(json.dumps({"pid": pid, "host": os.uname().nodename, "command": "old job"}))
    lock, notes = open_run_dir(tmp_path)
    try:
        assert notes and f"pid {pid}" in notes[0] and "stale lock" in notes[0] and "old job" in notes[0]
        assert json.loads((tmp_path / LOCK).read_text())["pid"] == os.getpid()
    finally:
        lock.release()


def test_killed_holder_leaves_a_stale_lock_that_the_next_job_takes_over(tmp_path: Path) -> None:
    code = f"from trustsim.rundir import RunDirLock; RunDirLock({str(tmp_path)!r}).acquire(); print('held', flush=True); import time; time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(RunDirBusy, match=f"pid {proc.pid}"):
            RunDirLock(tmp_path).acquire()
    finally:
        proc.kill()
        proc.wait()
    with RunDirLock(tmp_path) as lock:  # kill -9 released the kernel lock; the file names the dead holder
        assert lock.note is not None and f"pid {proc.pid}" in lock.note


def test_job_into_a_busy_directory_fails_at_once_and_writes_nothing(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text('{"run_id": "other", "status": "running"}')
    with RunDirLock(run_dir, command="the other job"):
        t0 = time.perf_counter()
        code = run_in_process(ESCAPE, run_dir)
        assert time.perf_counter() - t0 < 30
    assert code == 5
    err = capsys.readouterr().err
    assert f"run directory {run_dir} is in use by another job" in err and "the other job" in err
    assert json.loads((run_dir / "manifest.json").read_text()) == {"run_id": "other", "status": "running"}
    assert sorted(p.name for p in run_dir.iterdir()) == ["manifest.json"]


def _start_job(run_dir: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "trustsim", *ESCAPE, *extra, f"hydra.run.dir={run_dir}"]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_jobs_into_one_run_directory(tmp_path: Path) -> None:
    """Issue 9/11: one job fails clearly naming the directory and the other process; the other's files are
    intact (events contiguous, tables whole, manifest complete)."""
    run_dir = tmp_path / "shared"
    first = _start_job(run_dir, "runs=400")
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / LOCK).exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = _start_job(run_dir, "runs=2")
        _out, err = second.communicate(timeout=120)
        assert first.poll() is None, "the first job ended before the second started: make it longer"
    finally:
        _first_out, first_err = first.communicate(timeout=600)
    assert second.returncode == 5, err
    assert f"run directory {run_dir} is in use by another job (pid {first.pid} on host" in err
    assert "Traceback" not in err
    assert first.returncode == 0, first_err
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["runs"] == 400
    seqs = [json.loads(line)["seq"] for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert seqs == list(range(len(seqs)))
    games = (run_dir / "games.csv").read_text().splitlines()
    assert len(games) - 1 == manifest["counts"]["games"] == manifest["tables"]["games"] == 400 * 11
    width = {len(line.split(",")) for line in games}
    assert len(width) == 1
    assert not (run_dir / LOCK).exists()
    overrides = (run_dir / ".hydra" / "overrides.yaml").read_text()  # Hydra's record is the first job's too
    assert "runs=400" in overrides and "runs=2" not in overrides
