"""The cores shared by the processes that run the embedded model at once: one lock file per core.

Two terminals, a joblib sweep, a test runner's workers: each process loads its own model, and llama.cpp's
spinning threads slow every call down several times when they outnumber the cores (:mod:`.threads`). So
the processes that use the default thread count coordinate through lock files in the user's cache directory
(``$XDG_CACHE_HOME/trustsim/cores``, else ``~/.cache/trustsim/cores``):

- each process holds a lock on one ``process-<i>.lock`` while its model lives: the processes present;
- and one on ``core-<j>.lock`` for each thread it computes with.

The locks are ``fcntl.flock`` locks: the kernel drops them when a process ends, killed or not, so no stale
lock outlives it. Before each call a process takes its share (:meth:`CoreShare.rebalance`): the cores divided
between the processes present (the earliest ``process-<i>`` take the remainder), at most what it wanted when
its model loaded. It releases the cores above its share and takes free ones up to it; one that holds no
core waits until one is free (at most :data:`WAIT_S`: a holder that makes no calls computes nothing, and
then it goes ahead with one thread). So the threads of processes that compute never outnumber the cores,
and a process that finishes leaves its cores to the others at their next call. A process that holds fewer
cores than it wanted says so once in its log.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from trustsim.llm.threads import thread_count

log = logging.getLogger(__name__)

POLL_S = 0.2
"""Seconds between two looks for a free core while a process holds none."""
WAIT_S = 10.0
"""Seconds a process waits for a core before it computes without one. The processes that hold the cores
give back what is above their share at their next call, a second or two apart; one that makes no call (a
notebook that ran the model an hour ago, a parent waiting for the child that waits here) computes
nothing, so going ahead cannot overload the cores, and waiting for it could last for ever."""
MAX_PROCESSES = 1024


def lock_dir() -> Path:
    """Where the lock files lie: ``$XDG_CACHE_HOME/trustsim/cores`` (default ``~/.cache/trustsim/cores``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trustsim" / "cores"


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on ``path``, or None when another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _release(fd: int) -> None:
    os.close(fd)  # closing the descriptor drops its lock


def _held_by_others(path: Path) -> bool:
    fd = _try_lock(path)
    if fd is None:
        return True
    _release(fd)
    return False


class CoreShare:
    """This process's share of the machine's cores (see the module docstring).

    Args:
        cores: The cores the processes share (one lock file each).
        wanted: The threads this process would use alone (default: every core; :meth:`want` sets it).
        directory: Where the lock files lie (default :func:`lock_dir`).
        sleep: Waits between two looks for a free core.
        wait_s: How long a process that holds no core waits for one (:data:`WAIT_S`).
    """

    def __init__(
        self,
        cores: int,
        wanted: int | None = None,
        directory: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
        wait_s: float = WAIT_S,
    ) -> None:
        self.cores = max(1, cores)
        self.wanted = self.cores
        self.want(wanted or self.cores)
        self.dir = directory or lock_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self._sleep = sleep
        self._wait_s = wait_s
        self._held: dict[int, int] = {}  # core index -> descriptor holding its lock
        self._said = self._said_idle = self._waited = False
        self.slot, self._slot_fd = self._register()

    def want(self, threads: int) -> None:
        """Set the threads this process would use alone (1 to the cores)."""
        self.wanted = max(1, min(threads, self.cores))

    def _register(self) -> tuple[int, int]:
        for i in range(MAX_PROCESSES):
            fd = _try_lock(self.dir / f"process-{i}.lock")
            if fd is not None:
                return i, fd
        raise RuntimeError(f"{MAX_PROCESSES} processes already share the cores in {self.dir}")

    def _core(self, j: int) -> Path:
        return self.dir / f"core-{j}.lock"

    @property
    def threads(self) -> int:
        """The threads to compute with: the cores this process holds (1 when it went ahead without one)."""
        return max(1, len(self._held))

    def locked_by_others(self) -> int:
        """Cores whose lock another process holds."""
        return sum(1 for j in range(self.cores) if j not in self._held and _held_by_others(self._core(j)))

    def present(self) -> list[int]:
        """The slots of the processes present (this one included), in order."""
        slots = {self.slot}
        for path in self.dir.glob("process-*.lock"):
            i = int(path.stem.split("-", 1)[1])
            if i != self.slot and _held_by_others(path):
                slots.add(i)
        return sorted(slots)

    def share(self) -> int:
        """This process's fair share of the cores now (0: more processes than cores, and it comes later)."""
        present = self.present()
        rank = present.index(self.slot)
        return self.cores // len(present) + (1 if rank < self.cores % len(present) else 0)

    def rebalance(self) -> int:
        """Hold this process's share of the cores, waiting up to ``wait_s`` for one if it holds none; the
        threads to compute with (:attr:`threads`)."""
        target = max(1, min(self.wanted, self.share()))
        for j in sorted(self._held, reverse=True)[: max(0, len(self._held) - target)]:
            _release(self._held.pop(j))
        deadline = time.monotonic() + self._wait_s
        while True:
            for j in range(self.cores):
                if len(self._held) >= target:
                    break
                if j not in self._held and (fd := _try_lock(self._core(j))) is not None:
                    self._held[j] = fd
            if self._held:
                break
            if time.monotonic() >= deadline:
                if not self._said_idle:
                    self._said_idle = True
                    log.warning(
                        "embedded model: no core freed within %.0f s (the processes holding them make no "
                        "calls); it computes with 1 thread and takes a core when one frees",
                        self._wait_s,
                    )
                return self.threads
            if not self._waited:
                log.info("embedded model: every core is in use by other embedded-model processes; waiting")
                self._waited = True
            self._sleep(POLL_S)
        if len(self._held) < self.wanted and not self._said:
            self._said = True
            log.warning(
                "embedded model: %d of the %d cores it wanted (%d other processes run it on this machine's "
                "%d cores); it computes with %d thread(s) and takes more as they free up",
                len(self._held),
                self.wanted,
                len(self.present()) - 1,
                self.cores,
                len(self._held),
            )
        return self.threads

    def close(self) -> None:
        """Release every lock (the model is freed); again: nothing."""
        for fd in self._held.values():
            _release(fd)
        self._held.clear()
        if self._slot_fd >= 0:
            _release(self._slot_fd)
            self._slot_fd = -1


class Alone:
    """The share of a process that cannot reach the lock directory (read-only home, no such file system):
    the threads it measured, for every call."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def rebalance(self) -> int:
        return self.threads

    def close(self) -> None:
        pass


_PROCESS_SHARE: CoreShare | Alone | None = None


def process_share(free: Callable[[], float], cores: int) -> CoreShare | Alone:
    """This process's :class:`CoreShare`, created once: registered first (so that processes starting
    together see each other), then wanting the ``free()`` cores (measured now) plus those other processes
    hold for the model (shared fairly between them), rounded, at most ``cores`` and the threads' ceiling.
    Where the lock directory cannot be written: :class:`Alone` with the free cores."""
    global _PROCESS_SHARE
    if _PROCESS_SHARE is None:
        share: CoreShare | Alone
        try:
            shared = CoreShare(cores)
        except OSError as exc:
            log.warning(
                "embedded model: cannot share the cores through %s (%s); it computes alone", lock_dir(), exc
            )
            share = Alone(thread_count(free(), cores))
        else:
            shared.want(thread_count(free() + shared.locked_by_others(), cores))
            shared.rebalance()
            share = shared
        _PROCESS_SHARE = share
    return _PROCESS_SHARE


def close_process_share() -> None:
    """Release this process's cores (its models are freed)."""
    global _PROCESS_SHARE
    if _PROCESS_SHARE is not None:
        _PROCESS_SHARE.close()
        _PROCESS_SHARE = None
