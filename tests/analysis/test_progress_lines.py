"""A long analysis step prints a progress line now and then; a short one prints none."""

from __future__ import annotations

import io
import time

from analysis.progress import step, working


def test_a_long_step_prints_progress_lines_naming_the_step() -> None:
    out = io.StringIO()
    with working("analysis card", stream=out, first_s=0.2, every_s=0.4):
        step("scoring 1786 games")
        time.sleep(1.3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(ln.startswith("analysis card: scoring 1786 games, 0:0") for ln in lines)
    done = out.getvalue()
    time.sleep(0.5)
    assert out.getvalue() == done  # the block ended: no more lines


def test_a_short_or_quiet_command_prints_none() -> None:
    out = io.StringIO()
    with working("analysis trust", stream=out, first_s=0.5):
        time.sleep(0.1)
    with working("analysis yardstick", stream=out, first_s=0.05, enabled=False):
        time.sleep(0.3)
    time.sleep(0.6)
    assert out.getvalue() == ""
