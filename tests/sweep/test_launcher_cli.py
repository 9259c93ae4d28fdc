"""``python -m trustsim -m ...`` through trustsim's launcher (the default for multiruns): invalid jobs refused
before anything runs, a kill -9 of the whole sweep resumed without re-sending a stored request, Ctrl-C."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli, cli_env
from trustsim.llm.fake_server import FakeServer

from .helpers import KEY, KEY_ENV, llm_overrides, manifest, reply

REPO = Path(__file__).resolve().parents[2]


ENV = {"CI": "true", KEY_ENV: KEY}


def trustsim(cwd: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return cli("trustsim", *args, cwd=cwd, env=ENV, timeout=timeout)


def _rows(store: Path) -> int:
    """Rows stored so far, read without creating the file (an empty file is refused as a damaged store)."""
    if not store.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # created, not yet migrated
        return 0


def _sweep_with_rows_stored(tmp_path: Path, args: list[str], store: Path, rows: int, **popen: object):
    """Start the sweep in its own process and return it once ``rows`` answers are stored (or after 120 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustsim", *args], cwd=tmp_path, env=cli_env(ENV), **popen
    )
    deadline = time.time() + 120
    while time.time() < deadline and _rows(store) < rows:
        time.sleep(0.05)
    return proc


def test_an_invalid_job_fails_the_sweep_before_anything_runs(tmp_path):
    proc = trustsim(
        tmp_path,
        "-m",
        "+experiment=1strike",
        "agent=bayes",
        "game.games=2",
        "seed=0,-1",
        "hydra.sweep.dir=sw",
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert (
        "job 1 [+experiment=1strike agent=bayes game.games=2 seed=-1]: config error at 'seed'" in proc.stderr
    )
    assert "nothing was run" in proc.stderr and "Traceback" not in proc.stderr
    assert not [p for p in (tmp_path / "sw").iterdir() if p.is_dir()]  # no job started, not even job 0


@pytest.mark.slow
def test_a_killed_sweep_resumes_without_resending_a_stored_request(tmp_path):
    store = tmp_path / "store.sqlite"
    with FakeServer(reply=reply, delay_s=0.1) as srv:
        args = [
            "-m",
            "+experiment=smooth,1strike",
            *llm_overrides(srv, store, "runs=2", "game.games=3"),
            "hydra.sweep.dir=sw",
        ]
        proc = _sweep_with_rows_stored(
            tmp_path, args, store, 20, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.kill(proc.pid, signal.SIGKILL)  # the whole sweep: one process
        proc.wait(10)
        stored, sent = _rows(store), len(srv.requests)
        assert 20 <= stored < 100
        done = trustsim(tmp_path, *args)
        assert done.returncode == 0, done.stderr[-3000:]
        resent = len(srv.requests) - sent
    assert resent > 0 and _rows(store) == stored + resent  # every request sent again was a new one
    jobs = list(csv.DictReader((tmp_path / "sw" / "jobs.csv").open()))
    assert [j["status"] for j in jobs] == ["complete", "complete"]
    assert sum(manifest(tmp_path / "sw" / j["dir"])["counts"]["games"] for j in jobs) == 12


@pytest.mark.slow
def test_ctrl_c_stops_every_running_job_each_saying_so(tmp_path):
    store = tmp_path / "store.sqlite"
    with FakeServer(reply=reply, delay_s=0.3) as srv:
        args = [
            "-m",
            "+experiment=smooth,1strike",
            *llm_overrides(srv, store, "game.games=11"),
            "hydra.sweep.dir=sw",
        ]
        proc = _sweep_with_rows_stored(
            tmp_path, args, store, 6, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-3000:]  # interrupted, as a single run
    assert "sweep interrupted" in err and "2 of 2 jobs did not complete" in err
    for job in (tmp_path / "sw").glob("00*"):
        m = manifest(job)
        assert m["status"] == "failed" and m["failure"]["reason"] == "interrupted"


@pytest.mark.slow
def test_a_large_sweep_is_composed_in_worker_processes(tmp_path):
    """From 16 jobs on, the jobs' configs are composed in forked workers: the same jobs, directories and
    checks (an invalid one still fails the sweep before anything runs)."""
    seeds = ",".join(str(s) for s in range(16))
    bad = trustsim(tmp_path, "-m", "+experiment=1strike", "agent=bayes", "game.games=1", f"seed=-1,{seeds}")
    assert (
        bad.returncode == 2 and "job 0 [+experiment=1strike agent=bayes game.games=1 seed=-1]" in bad.stderr
    )
    proc = trustsim(
        tmp_path,
        "-m",
        "+experiment=1strike",
        "agent=bayes",
        "game.games=1",
        f"seed={seeds}",
        "hydra.sweep.dir=big",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = list(csv.DictReader((tmp_path / "big" / "jobs.csv").open()))
    assert [int(j["job"]) for j in jobs] == list(range(16)) and {j["status"] for j in jobs} == {"complete"}
    assert all(j["dir"].endswith(f"seed={j['job']}") for j in jobs)
    assert (tmp_path / "big" / jobs[3]["dir"] / ".hydra" / "overrides.yaml").read_text().splitlines()[
        -1
    ] == "- seed=3"
