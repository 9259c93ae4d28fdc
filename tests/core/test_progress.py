"""Progress output: a bar on a terminal, plain lines (no carriage returns) in logs, nothing when disabled."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trustsim import progress
from trustsim.progress import LineProgress, make_progress, progress_mode

ROOT = Path(__file__).resolve().parents[2]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_mode_follows_the_setting_and_the_terminal():
    assert progress_mode("auto", _Tty()) == "bar"
    assert progress_mode("auto", io.StringIO()) == "lines"
    assert progress_mode("true", io.StringIO()) == "bar"
    assert progress_mode(True, io.StringIO()) == "bar"
    assert progress_mode("false", _Tty()) == "off"
    assert progress_mode(False, _Tty()) == "off"


def test_lines_one_per_unit_with_elapsed_time_and_no_carriage_return():
    now = [0.0]
    out = io.StringIO()
    bar = LineProgress(11, "escape room mid2strike", stream=out, clock=lambda: now[0], heartbeat_s=None)
    for _ in range(11):
        now[0] += 3.0  # 3 s per game
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0] == "escape room mid2strike: 0/11, started"
    assert len(lines) == 12
    assert lines[1] == "escape room mid2strike: 1/11 (9%), 0:03 elapsed, estimating time left"
    assert lines[3] == "escape room mid2strike: 3/11 (27%), 0:09 elapsed, ~0:24 left"
    assert lines[-1] == "escape room mid2strike: 11/11 (100%), 0:33 elapsed"


def test_a_short_job_prints_its_start_and_its_end():
    out = io.StringIO()
    bar = LineProgress(55, "arena tournament", stream=out)
    for _ in range(55):
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == ["arena tournament: 0/55, started", lines[-1]] and "55/55 (100%)" in lines[-1]


def test_lines_are_capped_for_long_jobs_and_time_triggers_a_line():
    now = [0.0]
    out = io.StringIO()
    bar = LineProgress(1000, "arena tournament", stream=out, clock=lambda: now[0], heartbeat_s=None)
    for _ in range(1000):
        now[0] += 0.1
        bar.update(1)
    bar.close()
    assert 1 + progress.MAX_LINES >= len(out.getvalue().splitlines()) > 10
    out = io.StringIO()
    now[0] = 0.0
    slow = LineProgress(1000, "reliance main", stream=out, clock=lambda: now[0], heartbeat_s=None)
    now[0] = 1.0
    slow.update(1)  # 1 s later: not due (a line per 20 units)
    now[0] = 100.0
    slow.update(1)  # 100 s later: due by time
    assert out.getvalue().splitlines()[1].startswith("reliance main: 2/1000 (0%), 1:40 elapsed")


def test_a_stopped_job_says_so():
    out = io.StringIO()
    bar = LineProgress(5, "x", stream=out)
    bar.update(2)
    bar.close()
    bar.close()
    assert out.getvalue().splitlines()[-1].endswith("(stopped)")
    assert out.getvalue().count("(stopped)") == 1


def test_disabled_progress_prints_nothing(capsys):
    bar = make_progress(3, "x", "false")
    bar.update(3)
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "desc", "units"),
    [
        (["+experiment=mid2strike", "agent=bayes"], "escape room mid2strike", 11),
        (["+experiment=reliance", "agent=oracle", "game.limit=4"], "reliance main", 4),
        (["+experiment=ipd"], "arena match", 1),
        (["+experiment=trust_game"], "trust game exchanges", 100),  # one per pair: one-shot
    ],
)
def test_every_game_prints_plain_lines_into_a_log(tmp_path, overrides, desc, units):
    """``progress=auto`` with stderr redirected to a file: plain lines counting units of play, never a bar;
    a job of a second or two prints little more than its start and its end."""
    log = tmp_path / "stderr.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("CI", None)
    with log.open("w") as fh:
        proc = subprocess.run(
            [sys.executable, "-m", "trustsim", *overrides, f"hydra.run.dir={tmp_path / 'run'}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=fh,
            timeout=300,
        )
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "\r" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith(f"{desc}: ")]
    assert lines[0] == f"{desc}: 0/{units}, started"
    assert 2 <= len(lines) <= 4
    assert lines[-1].startswith(f"{desc}: {units}/{units} (100%), ") and "elapsed" in lines[-1]


def test_a_heartbeat_line_comes_while_a_unit_is_in_progress():
    out = io.StringIO()
    bar = LineProgress(3, "escape room smooth", stream=out, heartbeat_s=0.2)
    bar.update(1)
    time.sleep(1.5)  # the heartbeat checks every 0.2 s here (every second by default)
    bar.close()
    beats = [ln for ln in out.getvalue().splitlines() if "(working: " in ln]
    assert len(beats) >= 2 and all(ln.startswith("escape room smooth: 1/3 (33%), ") for ln in beats)
    assert beats[0].endswith("since 1/3)") and "left" in beats[0]
    done = out.getvalue()
    time.sleep(0.5)
    assert out.getvalue() == done  # closed: no more lines


def test_time_left_settles_when_units_finish_in_bursts():
    """Units finishing in bursts (a round of concurrent calls): 5 every 30 s, 100 units, 600 s in all. The
    estimate never reads ~0 with most of the job left and stays within 2x of the truth once a few are done."""
    now = [0.0]
    bar = LineProgress(100, "x", stream=io.StringIO(), clock=lambda: now[0], heartbeat_s=None)
    assert bar.time_left(1.0) is None  # estimating
    for burst in range(1, 20):
        for t in (burst * 30.0 - 15, burst * 30.0):  # mid-gap (a unit in progress), then the burst
            now[0] = t
            if t == burst * 30.0:
                bar.update(5)
            if bar.n == 0:
                assert bar.time_left(t) is None  # estimating
                continue
            truth = 600.0 - t
            assert truth / 2 <= bar.time_left(t) <= truth * 2, (t, bar.time_left(t), truth)


def test_time_left_follows_a_slower_pace_and_grows_while_a_unit_overruns():
    now = [0.0]
    bar = LineProgress(20, "x", stream=io.StringIO(), clock=lambda: now[0], heartbeat_s=None)
    for t in range(1, 11):  # 1 s per unit
        now[0] = t
        bar.update(1)
    assert bar.time_left(10.0) == pytest.approx(10.0)
    for t in (13, 16, 19, 22, 25):  # then 3 s per unit (the machine got busy)
        now[0] = t
        bar.update(1)
    whole = 25 / 15
    assert 5 * whole < bar.time_left(25.0) < 5 * 3  # between the whole job's pace and the new one
    assert bar.time_left(60.0) > bar.time_left(25.0) * 1.5  # a unit running long slows the rate
    assert LineProgress(5, "y", stream=io.StringIO(), heartbeat_s=None).time_left(1.0) is None


class _KernelStream(io.StringIO):
    """Stands in for ipykernel's OutStream (what a notebook's stderr is)."""


_KernelStream.__module__ = "ipykernel.iostream"


def test_in_a_notebook_a_fast_job_prints_one_line(monkeypatch):
    stream = _KernelStream()
    assert progress_mode("auto", stream) == "notebook"
    monkeypatch.setattr(sys, "stderr", stream)
    bar = make_progress(55, "escape room mid2strike")
    for _ in range(55):
        bar.update(1)
    bar.close()
    assert stream.getvalue().splitlines() == ["escape room mid2strike: 55/55 (100%), 0:00 elapsed"]


NOTEBOOK = """
import asyncio, io, json, sys, types, warnings

class ZMQInteractiveShell:  # what tqdm.auto looks for to decide it runs in a notebook
    config = {"IPKernelApp": {}}

ipython = types.ModuleType("IPython")
ipython.get_ipython = ZMQInteractiveShell
sys.modules["IPython"] = ipython
sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")

class OutStream(io.StringIO):
    pass

OutStream.__module__ = "ipykernel.iostream"
sys.stderr = OutStream()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from trustsim import api
    from analysis import escape_room

    async def cell():  # a notebook cell: an event loop is running
        return api.run("mid2strike", ["agent=bayes", "runs=5"], run_dir=sys.argv[1])

    status = asyncio.run(cell()).status
    escape_room.analyse([sys.argv[1]], resamples=50)
print(json.dumps({"status": status, "stderr": sys.stderr.getvalue(),
                  "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}))
"""


@pytest.mark.slow
def test_a_notebook_gets_one_progress_line_and_no_tqdm_warning(tmp_path):
    """A 0.1 s job (55 games) in a notebook: one progress line, and the analysis warns nothing about tqdm."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, "-c", NOTEBOOK, str(tmp_path / "run")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen["status"] == "complete"
    lines = [ln for ln in seen["stderr"].splitlines() if ln.startswith("escape room ")]
    assert len(lines) == 1 and lines[0].startswith("escape room mid2strike: 55/55 (100%)")
    assert not [w for w in seen["warnings"] if "Tqdm" in w], seen["warnings"]
