"""Processes that run the embedded model at once share the cores (trustsim/llm/cores.py), tested across real
processes that hold a CoreShare each (no model: the allocator alone)."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trustsim.llm import cores

REPO = Path(__file__).resolve().parents[2]
WORKER = textwrap.dedent(
    """
    import logging, sys
    from pathlib import Path
    from trustsim.llm.cores import CoreShare
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
    share = CoreShare(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[1]), wait_s=120)
    print("registered", flush=True)
    for line in sys.stdin:
        print(share.rebalance(), flush=True)
    """
)


class Worker:
    """A process holding a CoreShare; each :meth:`call` rebalances it (as before a model call)."""

    def __init__(self, directory: Path, cores: int, wanted: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(directory), str(cores), str(wanted)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert self.read(30) == "registered"

    def read(self, timeout: float) -> str | None:
        """The next line the worker prints, or None if it prints none within ``timeout`` seconds."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().strip() if ready else None

    def call(self) -> None:
        self.proc.stdin.write("call\n")
        self.proc.stdin.flush()

    def threads(self, timeout: float = 30) -> int | None:
        line = self.read(timeout)
        return None if line is None else int(line)

    def kill(self) -> str:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        return self.proc.stderr.read()

    def stop(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(30)
        return self.proc.stderr.read()


def _cores_locked(directory: Path, n: int) -> int:
    """Cores whose lock some process holds (seen from outside)."""
    held = 0
    for j in range(n):
        fd = os.open(directory / f"core-{j}.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held += 1
        finally:
            os.close(fd)
    return held


def test_processes_never_hold_more_threads_than_cores(tmp_path: Path) -> None:
    a = Worker(tmp_path, 2, 2)
    a.call()
    assert a.threads() == 2  # alone: both cores
    b = Worker(tmp_path, 2, 2)
    b.call()
    assert b.threads(1.0) is None  # both cores are A's: B waits
    a.call()
    assert a.threads() == 1  # at its next call A keeps its share
    assert b.threads() == 1  # and B gets the core A left
    c = Worker(tmp_path, 2, 1)
    c.call()
    assert c.threads(1.0) is None  # a third process on two cores waits
    assert _cores_locked(tmp_path, 2) == 2
    a.kill()  # a killed process leaves its core
    assert c.threads() == 1
    b.call()
    assert b.threads() == 1  # B and C present: one core each
    assert _cores_locked(tmp_path, 2) == 2
    c.stop()
    b.call()
    assert b.threads() == 2  # alone again: both cores
    log = b.stop()
    assert log.count("1 of the 2 cores it wanted") == 1  # said once, not at every call
    assert "waiting" in log
    assert _cores_locked(tmp_path, 2) == 0


def test_a_process_takes_no_more_than_it_wanted(tmp_path: Path) -> None:
    share = cores.CoreShare(4, 1, tmp_path)
    try:
        assert share.rebalance() == 1
        assert share.locked_by_others() == 0
        other = cores.CoreShare(4, 4, tmp_path)  # a second share in this process counts as another process
        try:
            assert share.locked_by_others() == 0
            assert other.rebalance() == 2  # two processes present: two cores each at most
            assert share.locked_by_others() == 2
        finally:
            other.close()
        assert share.present() == [share.slot]
    finally:
        share.close()


def test_a_process_waits_for_an_idle_holder_only_so_long(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A holder that makes no calls (a parent waiting for this child) would hold its cores for ever."""
    idle = cores.CoreShare(1, 1, tmp_path)
    waiting = cores.CoreShare(1, 1, tmp_path, sleep=lambda s: None, wait_s=0.05)
    try:
        assert idle.rebalance() == 1
        with caplog.at_level("INFO", logger="trustsim.llm.cores"):
            assert waiting.rebalance() == 1  # went ahead with one thread, without a lock
            assert waiting.rebalance() == 1
        assert waiting.locked_by_others() == 1 and waiting._held == {}
        assert caplog.text.count("no core freed within") == 1
        idle.close()
        assert waiting.rebalance() == 1 and len(waiting._held) == 1  # takes the core once it is free
    finally:
        idle.close()
        waiting.close()


def test_an_unwritable_cache_leaves_the_process_alone_with_its_free_cores(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(cores, "_PROCESS_SHARE", None)
    share = cores.process_share(lambda: 1.6, 4)
    try:
        assert isinstance(share, cores.Alone) and share.threads == 2 and share.rebalance() == 2
    finally:
        cores.close_process_share()


def test_the_lock_directory_is_in_the_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cores.lock_dir() == tmp_path / "trustsim" / "cores"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cores.lock_dir() == Path.home() / ".cache" / "trustsim" / "cores"
