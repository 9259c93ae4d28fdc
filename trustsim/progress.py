"""Progress reporting for jobs: a tqdm bar on an interactive terminal, plain lines everywhere else.

``progress=auto`` (the default) draws a bar only when stderr is a terminal. Off a terminal (a log file, a
pipe, CI) a bar's ``\\r`` redraws would litter the log, so plain lines are printed instead: one when the job
starts, one after a finished unit (game, scenario, match, exchange) — at most about :data:`MAX_LINES` per
job, no two within :data:`MIN_GAP_S` seconds (a job of a second prints its start and its end), and at least
one every :data:`LINE_INTERVAL_S` seconds while units finish — and one at the end, each with the elapsed
time and an estimate of the time left. A unit can take minutes (a slow model, a busy machine), so a
heartbeat line also comes at least every :data:`HEARTBEAT_S` seconds while one is in progress, and the bar
redraws its clock every second.

In a Jupyter notebook (stderr is the kernel's stream) every line is an output of the cell, so lines come only
by time (every :data:`LINE_INTERVAL_S` seconds while units finish, the heartbeat) plus the final count: a
job of a fraction of a second prints one line. ``progress=true`` forces the bar, ``progress=false`` prints
nothing.

The time left is the units left divided by a smoothed rate: the mean of the whole job's rate (units done ÷
time elapsed, up to now) and the rate over the most recent half of the elapsed time (the pace now, when a
machine got busier or later units are longer). Both windows end now, so a unit in progress slows the rate
as it runs, and units that finish in bursts (a round of concurrent calls) do not make it jump. Until
:data:`MIN_UNITS` units are done the line says ``estimating time left``.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from tqdm import tqdm
from tqdm.std import TqdmWarning

# Mesa imports ``tqdm.auto`` (for its batch runner), which in a notebook without ipywidgets warns "IProgress
# not found" (a TqdmWarning) about bars trustsim never draws. Imported here first, with that warning ignored,
# it is not imported (nor does it warn) again; jobs import this module before Mesa.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=TqdmWarning)
    from tqdm import auto as _tqdm_auto  # noqa: F401

MAX_LINES = 50
"""Plain mode prints about this many progress lines per job at most (plus start, end and heartbeats)."""
MIN_GAP_S = 2.0
"""Plain mode prints per-unit lines at most this often (in seconds), so a short job prints few lines."""
MIN_UNITS = 3
"""Units done before plain mode gives a time-left estimate."""
LINE_INTERVAL_S = 10.0
"""Plain mode prints a line at least this often (in seconds) while units keep finishing."""
HEARTBEAT_S = 30.0
"""Plain mode prints a line at least this often (in seconds) while a unit is in progress."""
BAR_REFRESH_S = 1.0
"""The bar redraws its elapsed time this often (in seconds) while a unit is in progress."""


class Progress(Protocol):
    """What a game's runner gets from ``ctx.progress(total, desc)``."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


def in_notebook(stream: TextIO) -> bool:
    """Whether ``stream`` is a Jupyter kernel's output stream (ipykernel's ``OutStream``)."""
    return type(stream).__module__.split(".", 1)[0] == "ipykernel"


def progress_mode(setting: Any, stream: TextIO | None = None) -> str:
    """``bar``, ``lines``, ``notebook`` or ``off`` for a ``progress`` setting (``auto``/``true``/``false``)."""
    if setting in (False, "false"):
        return "off"
    if setting in (True, "true"):
        return "bar"
    stream = sys.stderr if stream is None else stream
    if in_notebook(stream):
        return "notebook"
    isatty = getattr(stream, "isatty", None)
    return "bar" if callable(isatty) and isatty() else "lines"


def _clock(seconds: float) -> str:
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Heartbeat:
    """Calls ``beat()`` on a daemon thread whenever ``due()`` says so, checking every ``every`` seconds,
    until :meth:`stop`. The thread runs while a job's event loop or the embedded model is busy."""

    def __init__(self, every: float, due: Callable[[], bool], beat: Callable[[], None]) -> None:
        self._every = every
        self._due = due
        self._beat = beat
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="trustsim-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            if self._due():
                self._beat()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


class LineProgress:
    """Plain progress lines (no ``\\r``), for logs: ``desc: 3/11 (27%), 0:42 elapsed, ~1:50 left``.

    ``per_unit=False`` (notebooks): no start line and no line per ``step`` units, only lines by time.
    """

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        per_unit: bool = True,
        heartbeat_s: float | None = HEARTBEAT_S,
    ) -> None:
        self.total = max(0, int(total))
        self.desc = desc
        self.unit = unit
        self.stream = stream
        self.n = 0
        self._clock = clock
        self._per_unit = per_unit
        self.step = max(1, math.ceil(self.total / MAX_LINES)) if per_unit else self.total + 1
        self._start = clock()
        self._marks: list[tuple[int, float]] = [(0, self._start)]  # (units done, when), one per update
        self._last_n = 0
        self._last_t = self._start
        self._closed = False
        self._lock = threading.Lock()
        if per_unit:
            what = f" {self.unit}" if self.unit else ""
            self._write(f"{self.desc}: 0/{self.total}{what}, started")
        self._heartbeat_s = heartbeat_s or math.inf
        self._heartbeat = (
            Heartbeat(min(1.0, heartbeat_s), self._heartbeat_due, self._beat) if heartbeat_s else None
        )

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        print(text, file=stream, flush=True)

    def time_left(self, now: float) -> float | None:
        """Seconds left at the smoothed rate (see the module doc); None until :data:`MIN_UNITS` units (or all)
        are done, and when none are left."""
        left = self.total - self.n
        if left <= 0 or self.n < min(MIN_UNITS, self.total):
            return None
        elapsed = now - self._start
        if elapsed <= 0:
            return 0.0
        rate = self.n / elapsed
        half = elapsed / 2
        then = next((n for n, t in reversed(self._marks) if t <= now - half), 0)
        if self.n - then >= MIN_UNITS:
            rate = (rate + (self.n - then) / half) / 2
        return left / rate

    def _line(self, now: float) -> str:
        elapsed = now - self._start
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        text = f"{self.desc}: {self.n}/{self.total}{pct}, {_clock(elapsed)} elapsed"
        left = self.time_left(now)
        if left is not None:
            text += f", ~{_clock(left)} left"
        elif self.n < self.total:
            text += ", estimating time left"
        return text

    def update(self, n: int = 1) -> None:
        """Count ``n`` finished units; print a line when due (every ``step`` units or ``LINE_INTERVAL_S``)."""
        with self._lock:
            self.n += n
            now = self._clock()
            self._marks.append((self.n, now))
            since = now - self._last_t
            due = (
                self.n >= self.total
                or (self.n - self._last_n >= self.step and since >= MIN_GAP_S)
                or since >= LINE_INTERVAL_S
            )
            if due and self.n > self._last_n:
                self._write(self._line(now))
                self._last_n, self._last_t = self.n, now

    def _heartbeat_due(self) -> bool:
        return not self._closed and self._clock() - self._last_t >= self._heartbeat_s

    def _beat(self) -> None:
        """A line while a unit is in progress: the count, the clock, and how long since the last unit."""
        with self._lock:
            now = self._clock()
            if self._closed or now - self._last_t < self._heartbeat_s:
                return
            since = now - self._marks[-1][1]
            self._write(f"{self._line(now)} (working: {_clock(since)} since {self.n}/{self.total})")
            self._last_t = now

    def close(self) -> None:
        """Print the final count if the last update did not (e.g. a job that stopped early)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.n != self._last_n or self.n < self.total:
                self._write(self._line(self._clock()) + ("" if self.n >= self.total else " (stopped)"))
        if self._heartbeat is not None:
            self._heartbeat.stop()


class BarProgress:
    """A tqdm bar whose elapsed time and rate keep moving while a unit is in progress."""

    def __init__(self, total: int, desc: str, unit: str = "") -> None:
        self.bar = tqdm(total=total, desc=desc, unit=unit or "it", leave=False, dynamic_ncols=True)
        self._heartbeat = Heartbeat(BAR_REFRESH_S, lambda: not self.bar.disable, self.bar.refresh)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self._heartbeat.stop()
        self.bar.close()


class _Silent:
    def update(self, n: int = 1) -> None:
        del n

    def close(self) -> None:
        pass


def make_progress(total: int, desc: str, setting: Any = "auto", unit: str = "") -> Progress:
    """A progress reporter for ``total`` units: a tqdm bar, plain lines or nothing (see module doc)."""
    mode = progress_mode(setting)
    if mode == "bar":
        return BarProgress(total, desc, unit)
    if mode in ("lines", "notebook"):
        return LineProgress(total, desc, unit, per_unit=mode == "lines")
    return _Silent()
