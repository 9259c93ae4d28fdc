"""The progress of a sweep run by ``hydra/launcher=trustsim``, as one status: jobs done, running and waiting,
requests per second and 429s over every endpoint, elapsed time and time left.

Its mode follows the ``progress`` setting as a job's does (:func:`trustsim.progress.progress_mode`): on a
terminal a bar redrawn in place (the jobs' own lines are printed above it), elsewhere (a log, a pipe, CI) a
plain line when the sweep starts, at least every ``LINE_INTERVAL_S`` seconds while it runs and at the end;
``progress=false``: nothing. Jobs report their units of play (games, scenarios, matches) through
:meth:`SweepProgress.job_units`, so the time left counts partly done jobs too: it is the elapsed time times
what is left of the sweep's work over what is done, each job weighing the same.
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from tqdm import tqdm

from trustsim.progress import LINE_INTERVAL_S, _clock, progress_mode

RATE_WINDOW_S = 30.0
"""Requests per second are counted over this many seconds."""


class JobUnits:
    """One job's progress reporter (what ``ctx.progress(total, desc)`` gives in a sweep): counts its units."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.finished = False

    def start(self, total: int) -> JobUnits:
        self.total += max(0, int(total))
        return self

    def update(self, n: int = 1) -> None:
        self.done += n

    def close(self) -> None:
        pass

    @property
    def fraction(self) -> float:
        """Share of the job done: 1 when it finished (perhaps short of its units: it failed), else its units'."""
        if self.finished:
            return 1.0
        return min(1.0, self.done / self.total) if self.total else 0.0


class SweepProgress:
    """The sweep's status (see the module docstring). ``requests()`` gives the total requests sent and 429s
    received so far (the shared endpoints' counts); call :meth:`tick` about once a second."""

    def __init__(
        self,
        jobs: int,
        setting: Any = "auto",
        requests: Callable[[], tuple[int, int]] = lambda: (0, 0),
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.jobs = jobs
        self.mode = progress_mode(setting, stream)
        self.started = 0
        self.finished = 0
        self.failed = 0
        self.units: list[JobUnits] = []
        self._requests = requests
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._samples: collections.deque[tuple[float, int]] = collections.deque([(self._start, 0)])
        self._last_line = -1e9
        self._bar: tqdm | None = None
        if self.mode == "bar":
            self._bar = tqdm(
                total=jobs,
                desc="sweep",
                file=stream or sys.stderr,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix}",
                dynamic_ncols=True,
                leave=True,
            )
        self.tick()

    # -- what the launcher reports --------------------------------------------------------------------
    def job_units(self) -> JobUnits:
        """A job starts: its units reporter."""
        self.started += 1
        units = JobUnits()
        self.units.append(units)
        return units

    def job_finished(self, units: JobUnits, code: int) -> None:
        units.finished = True
        self.finished += 1
        self.failed += code != 0
        self.tick(force=True)

    # -- the status -----------------------------------------------------------------------------------
    def fraction(self) -> float:
        """Share of the sweep's work done: finished jobs count whole, running ones by their units."""
        return sum(u.fraction for u in self.units) / self.jobs if self.jobs else 1.0

    def status(self) -> str:
        """``12/100 jobs done (1 failed), 64 running, 24 waiting; 9.8 requests/s, 3 429s; 0:42 elapsed, ~2:10
        left``."""
        now = self._clock()
        sent, limited = self._requests()
        self._samples.append((now, sent))
        while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW_S:
            self._samples.popleft()
        t0, n0 = self._samples[0]
        rate = (sent - n0) / (now - t0) if now > t0 else 0.0
        elapsed = now - self._start
        failed = f" ({self.failed} failed)" if self.failed else ""
        text = (
            f"{self.finished}/{self.jobs} jobs done{failed}, {self.started - self.finished} running, "
            f"{self.jobs - self.started} waiting; {rate:.1f} requests/s, {limited} 429s; "
            f"{_clock(elapsed)} elapsed"
        )
        done = self.fraction()
        if 0 < done < 1:
            text += f", ~{_clock(elapsed * (1 - done) / done)} left"
        return text

    def tick(self, *, force: bool = False) -> None:
        """Redraw the bar, or print a line when one is due (``force``: a job finished)."""
        if self.mode == "off":
            return
        if self._bar is not None:
            self._bar.n = self.fraction() * self.jobs
            self._bar.set_postfix_str(self.status(), refresh=True)
            return
        now = self._clock()
        if force and self.finished < self.jobs and now - self._last_line < LINE_INTERVAL_S:
            return
        if force or now - self._last_line >= LINE_INTERVAL_S:
            self._last_line = now
            print(f"sweep: {self.status()}", file=self._stream or sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self.tick()
            self._bar.close()
            self._bar = None
        elif self.mode == "lines" and self.finished >= self.jobs:
            return  # the last job's line said it
        else:
            self.tick(force=True)

    @contextlib.contextmanager
    def above(self) -> Iterator[None]:
        """While the bar is drawn, print everything written to stdout and stderr above it (whole lines)."""
        if self._bar is None:
            yield
            return
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _AboveBar(saved[0]), _AboveBar(saved[1])
        try:
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                if isinstance(stream, _AboveBar):
                    stream.flush()
            sys.stdout, sys.stderr = saved


class _AboveBar:
    """A text stream whose complete lines are written above the progress bar (tqdm.write); each thread keeps
    its own partial line, so the lines of concurrent jobs do not mix."""

    def __init__(self, wrapped: TextIO) -> None:
        self._wrapped = wrapped
        self._partial = threading.local()

    def write(self, text: str) -> int:
        pending = getattr(self._partial, "text", "") + text
        head, sep, tail = pending.rpartition("\n")
        if sep:
            tqdm.write(head, file=self._wrapped)
        self._partial.text = tail
        return len(text)

    def flush(self) -> None:
        tail = getattr(self._partial, "text", "")
        if tail:
            self._partial.text = ""
            tqdm.write(tail, file=self._wrapped)
        self._wrapped.flush()

    def isatty(self) -> bool:
        return self._wrapped.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)
