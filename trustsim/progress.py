"""Progress reporting for jobs: a tqdm bar on an interactive terminal, plain lines everywhere else.

``progress=auto`` (the default) draws a bar only when stderr is a terminal. Off a terminal (a log file, a
pipe, CI) a bar's ``\\r`` redraws would litter the log, so one plain line is printed instead when the job
starts, after every finished unit (game, scenario, match) — at most about 50 lines per job, and at
least one line every ``LINE_INTERVAL_S`` seconds while units finish — and at the end, each with the elapsed
time. ``progress=true`` forces the bar, ``progress=false`` prints nothing.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from tqdm import tqdm

MAX_LINES = 50
"""Plain mode prints about this many progress lines per job at most (plus start and end)."""
LINE_INTERVAL_S = 10.0
"""Plain mode prints a line at least this often (in seconds) while units keep finishing."""


class Progress(Protocol):
    """What a game's runner gets from ``ctx.progress(total, desc)``."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


def progress_mode(setting: Any, stream: TextIO | None = None) -> str:
    """``bar``, ``lines`` or ``off`` for a ``progress`` setting (``auto``/``true``/``false``)."""
    if setting in (False, "false"):
        return "off"
    if setting in (True, "true"):
        return "bar"
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return "bar" if callable(isatty) and isatty() else "lines"


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class LineProgress:
    """Plain progress lines (no ``\\r``), for logs: ``desc: 3/11 (27%), 0:42 elapsed, ~1:50 left``."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(0, int(total))
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self.n = 0
        self._clock = clock
        self.step = max(1, math.ceil(self.total / MAX_LINES))
        self._start = clock()
        self._last_n = 0
        self._last_t = self._start
        self._closed = False
        what = f" {self.unit}" if self.unit else ""
        self._write(f"{self.desc}: 0/{self.total}{what}, started")

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        print(text, file=stream, flush=True)

    def _line(self) -> str:
        elapsed = self._clock() - self._start
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        text = f"{self.desc}: {self.n}/{self.total}{pct}, {_clock(elapsed)} elapsed"
        if 0 < self.n < self.total:
            text += f", ~{_clock(elapsed / self.n * (self.total - self.n))} left"
        return text

    def update(self, n: int = 1) -> None:
        """Count ``n`` finished units; print a line when due (every ``step`` units or ``LINE_INTERVAL_S``)."""
        self.n += n
        now = self._clock()
        due = (
            self.n >= self.total
            or self.n - self._last_n >= self.step
            or now - self._last_t >= LINE_INTERVAL_S
        )
        if due and self.n > self._last_n:
            self._write(self._line())
            self._last_n, self._last_t = self.n, now

    def close(self) -> None:
        """Print the final count if the last update did not (e.g. a job that stopped early)."""
        if self._closed:
            return
        self._closed = True
        if self.n != self._last_n or self.n < self.total:
            self._write(self._line() + ("" if self.n >= self.total else " (stopped)"))


class _Silent:
    def update(self, n: int = 1) -> None:
        del n

    def close(self) -> None:
        pass


def make_progress(total: int, desc: str, setting: Any = "auto", unit: str = "") -> Progress:
    """A progress reporter for ``total`` units: a tqdm bar, plain lines or nothing (see module doc)."""
    mode = progress_mode(setting)
    if mode == "bar":
        return tqdm(total=total, desc=desc, unit=unit or "it", leave=False, dynamic_ncols=True)
    if mode == "lines":
        return LineProgress(total, desc, unit)
    return _Silent()
