"""One job per run directory: an exclusive lock file held for the whole job.

The lock is ``<run_dir>/.trustsim.lock``, locked with ``flock`` (released by the kernel when the holder exits,
even on ``kill -9``) and holding the holder's pid, host, start time and command. A second job that targets
the directory fails at once with :class:`RunDirBusy`, naming the directory and the holder, before it writes
anything. A lock file left by a process that is gone is taken over, and :attr:`RunDirLock.note` says so.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustsim.errors import TrustsimError
from trustsim.rundir.foreign import check_run_dir, refuse_special
from trustsim.rundir.schema import LOCK

FLOCK = sys.platform != "win32"  # POSIX: an flock; elsewhere the pid check alone decides
if FLOCK:
    import fcntl

BUSY_EXIT_CODE = 5
_HANDED_OVER: dict[
    str, RunDirLock
] = {}  # locks taken before Hydra wrote into the directory (claim_from_argv)


class RunDirBusy(TrustsimError):
    """Another live job holds the run directory's lock."""

    exit_code = BUSY_EXIT_CODE
    resume = "wait for the other job to finish, or run into another directory (hydra.run.dir=...)"

    def __init__(self, run_dir: Path, holder: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.holder = holder
        who = describe_holder(holder)
        super().__init__(f"run directory {run_dir} is in use by another job ({who}); {self.resume}")


def describe_holder(holder: dict[str, Any]) -> str:
    """``pid 123 on host x, started ..., command ...`` from a lock file's content."""
    if not holder:
        return "holder unknown: the lock file is empty"
    parts = [f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}"]
    if holder.get("started"):
        parts.append(f"started {holder['started']}")
    if holder.get("command"):
        parts.append(f"command: {holder['command']}")
    return ", ".join(parts)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def _read_holder(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = b""
    while chunk := os.read(fd, 65536):
        raw += chunk
    try:
        data = json.loads(raw.decode("utf-8", errors="replace") or "{}")
    except json.JSONDecodeError:
        return {"content": raw[:200].decode("utf-8", errors="replace")}
    return data if isinstance(data, dict) else {}


class RunDirLock:
    """The exclusive lock of one run directory (a context manager)."""

    def __init__(self, run_dir: str | os.PathLike[str], command: str | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK
        self.command = command if command is not None else " ".join(sys.argv[:1] + sys.argv[1:])[:300]
        self.note: str | None = None
        self._fd: int | None = None
        self._borrowed = False

    @property
    def held(self) -> bool:
        return self._fd is not None or self._borrowed

    def acquire(self) -> RunDirLock:
        """Take the lock or raise :class:`RunDirBusy` at once (never waits).

        A lock this process took for the directory with :func:`claim_from_argv` (before Hydra wrote its files
        there) is handed over instead: the job then runs under it.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        owner = _HANDED_OVER.get(str(self.run_dir.resolve()))
        if owner is not None and owner.held:
            self._borrowed = True
            self.note, owner.note = owner.note, None
            return self
        host = socket.gethostname()
        for _ in range(20):  # retry only when the file was replaced under us by a releasing holder
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if FLOCK:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        raise RunDirBusy(self.run_dir, _read_holder(fd)) from None
                    try:
                        if os.fstat(fd).st_ino != os.stat(self.path).st_ino:
                            continue  # the holder removed this file while we opened it: start over
                    except FileNotFoundError:
                        continue
                previous = _read_holder(fd)
                pid = previous.get("pid")
                same_host = previous.get("host") == host
                if not FLOCK and isinstance(pid, int) and same_host and pid != os.getpid() and pid_alive(pid):
                    raise RunDirBusy(self.run_dir, previous)
                if previous:
                    self.note = (
                        f"took over a stale lock in {self.run_dir} ({describe_holder(previous)}): "
                        "that job is gone; its files are replaced by this run"
                    )
                info = {
                    "pid": os.getpid(),
                    "host": host,
                    "started": datetime.now(UTC).isoformat(timespec="seconds"),
                    "command": self.command,
                }
                try:
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    os.write(fd, (json.dumps(info) + "\n").encode("utf-8"))
                except OSError as exc:  # a full disk: no lock file is left behind, the error names the folder
                    self.path.unlink(missing_ok=True)
                    exc.filename = exc.filename or str(self.run_dir)
                    raise
                self._fd, fd = fd, -1
                return self
            finally:
                if fd >= 0:
                    os.close(fd)
        raise RunDirBusy(self.run_dir, {"content": "the lock file kept changing"})

    def release(self) -> None:
        """Remove the lock file and drop the lock (idempotent; a handed-over lock stays with its owner)."""
        if self._borrowed:
            self._borrowed = False
            return
        if self._fd is None:
            return
        _HANDED_OVER.pop(str(self.run_dir.resolve()), None)
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunDirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire_checked(run_dir: str | os.PathLike[str]) -> RunDirLock:
    """Lock ``run_dir`` for a job, refusing a folder a job must not write into
    (:func:`~trustsim.rundir.foreign.check_run_dir`) before anything is written there. A folder that holds a
    lock file is a trustsim job's: the lock decides first (:class:`RunDirBusy` while its job lives)."""
    folder = Path(run_dir)
    if (folder / LOCK).exists():
        refuse_special(folder)
    else:
        check_run_dir(folder)
    lock = RunDirLock(folder).acquire()
    try:
        check_run_dir(folder)
    except BaseException:
        lock.release()
        raise
    return lock


def claim_from_argv(argv: list[str]) -> RunDirLock | None:
    """Lock the run directory named on the command line (``hydra.run.dir=DIR``) before Hydra writes its
    ``.hydra/`` files there, so a second job into a busy directory changes nothing in it.

    Returns the held lock (the job takes it over), or None for a multirun or when no directory is named (the
    job then locks its directory itself). Raises :class:`RunDirBusy` when another job holds it, and
    :class:`~trustsim.rundir.foreign.RunDirForeign` (nothing written) when it is no folder a run may use.
    """
    if any(arg in ("-m", "--multirun") for arg in argv):
        return None
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+~") == "hydra.run.dir" and value and "${" not in value:
            lock = acquire_checked(value)
            _HANDED_OVER[str(lock.run_dir.resolve())] = lock
            return lock
    return None
