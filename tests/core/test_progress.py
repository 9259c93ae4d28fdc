"""Progress output: a bar on a terminal, plain lines (no carriage returns) in logs, nothing when disabled."""

from __future__ import annotations

import io
import os
import subprocess
import sys
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
    out = io.StringIO()
    bar = LineProgress(11, "escape room mid2strike", stream=out)
    for _ in range(11):
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0] == "escape room mid2strike: 0/11, started"
    assert len(lines) == 12
    assert lines[3].startswith("escape room mid2strike: 3/11 (27%), 0:00 elapsed, ~0:00 left")
    assert lines[-1] == "escape room mid2strike: 11/11 (100%), 0:00 elapsed"


def test_lines_are_capped_for_long_jobs_and_time_triggers_a_line():
    out = io.StringIO()
    bar = LineProgress(1000, "arena tournament", stream=out)
    for _ in range(1000):
        bar.update(1)
    bar.close()
    assert 1 + progress.MAX_LINES >= len(out.getvalue().splitlines()) > 10
    now = [0.0]
    out = io.StringIO()
    slow = LineProgress(1000, "reliance main", stream=out, clock=lambda: now[0])
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


@pytest.mark.parametrize(
    ("overrides", "desc", "units"),
    [
        (["+experiment=mid2strike", "agent=bayes"], "escape room mid2strike", 11),
        (["+experiment=reliance", "agent=oracle", "game.limit=4"], "reliance main", 4),
        (["+experiment=ipd"], "arena match", 1),
        (["+experiment=trust_game"], "trust game sessions", 1),
    ],
)
def test_every_game_prints_plain_lines_into_a_log(tmp_path, overrides, desc, units):
    """``progress=auto`` with stderr redirected to a file: one plain line per unit, never a bar."""
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
    assert len(lines) == units + 1
    assert lines[-1].startswith(f"{desc}: {units}/{units} (100%), ") and "elapsed" in lines[-1]
