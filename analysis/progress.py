"""A progress line while an analysis subcommand runs long: ``analysis card: working, 0:20 elapsed``.

Some subcommands take a minute (the card, the yardstick over the reference logs) with nothing to print until
they finish. :func:`working` prints a line to stderr once the command has run :data:`FIRST_S` seconds and
then every :data:`EVERY_S` seconds, from a daemon thread, until the block ends; a command that finishes
sooner prints nothing. :func:`step` names what is being done, for the next line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from trustsim.progress import Heartbeat

FIRST_S = 5.0
"""Seconds before the first progress line."""
EVERY_S = 15.0
"""Seconds between progress lines after the first."""

_step = ""


def step(label: str) -> None:
    """Name the step under way (shown by the next progress line)."""
    global _step
    _step = label


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"


@contextmanager
def working(
    name: str,
    stream: TextIO | None = None,
    first_s: float = FIRST_S,
    every_s: float = EVERY_S,
    *,
    enabled: bool = True,
) -> Iterator[None]:
    """Print ``<name>: <step or working>, m:ss elapsed`` while the block runs longer than ``first_s``
    (``enabled=False``: nothing, e.g. ``--quiet`` or a server that runs until stopped)."""
    if not enabled:
        yield
        return
    start = time.monotonic()
    last = [start - every_s + first_s]  # the first line is due at first_s

    def due() -> bool:
        return time.monotonic() - last[0] >= every_s

    def beat() -> None:
        now = time.monotonic()
        last[0] = now
        print(
            f"{name}: {_step or 'working'}, {_clock(now - start)} elapsed",
            file=stream or sys.stderr,
            flush=True,
        )

    step("")
    heartbeat = Heartbeat(min(1.0, first_s), due, beat)
    try:
        yield
    finally:
        heartbeat.stop()
        step("")
