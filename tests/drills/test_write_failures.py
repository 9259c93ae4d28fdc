"""Drills: a write that fails mid-run ends the job with a failed manifest, exit 3, one line naming the path and
the right advice; the request store keeps every answer it held, so re-running sends only what is missing.

How a full disk is made, without root:

- ``RLIMIT_FSIZE`` (``resource.setrlimit`` in the child, ``SIGXFSZ`` ignored): a write past the limit fails
  with ``EFBIG``, in whichever file grows past it first. It covers every writer of the job at the operating
  system's boundary (the run recorder's events and tables, the request store's SQLite writes), always
  available; the limit is per file, not a disk's total.
- A tiny tmpfs mounted over the run directory in a user and mount namespace (``unshare -rm``): real
  ``ENOSPC`` for every file of the run directory at once (the store outside it). Skipped where user
  namespaces are not allowed.

Permission lost mid-run (``EACCES``/``EROFS``) and I/O errors (``EIO``) take the same path; their advice is
checked on the classification itself.
"""

from __future__ import annotations

import errno
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim.llm.fake_server import FakeServer
from trustsim.write_failure import WriteFailed, write_failure

from ..llm.helpers import _can_unshare
from .helpers import TRACEBACK, cli_env, llm_overrides, manifest

FSIZE_RUNNER = """
import resource, signal, sys
limit = int(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, it does not kill
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["trustsim", *sys.argv[2:]]
from trustsim.__main__ import main
main()
"""


def run_limited(args: list[str], cwd: Path, limit: int | None, prefix: list[str] | None = None):
    """``python -m trustsim ARGS`` in a child whose files may not grow past ``limit`` bytes (None: no limit)."""
    command = [sys.executable, "-c", FSIZE_RUNNER, str(limit or -1), *args]
    if limit is None:
        command = [sys.executable, "-m", "trustsim", *args]
    return subprocess.run(
        [*(prefix or []), *command], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=300
    )


def stored(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        conn.close()


def assert_write_failure(done: subprocess.CompletedProcess[str], run_dir: Path, path_part: str) -> dict:
    """Exit 3, no traceback, one line naming the path, the advice once, and a failed manifest saying so."""
    assert done.returncode == 3, done.stderr[-3000:]
    assert TRACEBACK not in done.stderr + done.stdout
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("trustsim: run failed:")]
    assert "cannot write " in line and path_part in line, line
    assert done.stderr.count("then re-run the same command") == 1
    m = manifest(run_dir)
    assert m["status"] == "failed" and path_part in m["failure"]["reason"], m["failure"]
    assert m["failure"]["type"] == "WriteFailed" and "re-run the same command" in m["failure"]["resume"]
    return m


def test_recorder_past_the_file_size_limit(tmp_path) -> None:
    """A scripted job whose event log outgrows the limit: the recorder's flush fails (EFBIG)."""
    run_dir = tmp_path / "run"
    args = ["+experiment=mid2strike", "agent=bayes", "runs=4", f"hydra.run.dir={run_dir}"]
    done = run_limited(args, tmp_path, 48 * 1024)
    m = assert_write_failure(done, run_dir, str(run_dir))
    assert "free space on the disk that holds" in m["failure"]["resume"]
    assert (run_dir / "events.jsonl").stat().st_size <= 48 * 1024


@pytest.mark.slow
def test_store_past_the_file_size_limit_keeps_its_answers(tmp_path) -> None:
    """An LLM job whose new request store outgrows the limit: the store's write fails (SQLITE_FULL); every
    answer stored before is kept, and the same command afterwards sends only the missing requests."""
    store = tmp_path / "store.sqlite"
    with FakeServer() as server:
        args = llm_overrides(server.api_base, store)
        failed = run_limited([*args, f"hydra.run.dir={tmp_path / 'failed'}"], tmp_path, 64 * 1024)
        m = assert_write_failure(failed, tmp_path / "failed", str(store))
        assert "llm.store_path" in m["failure"]["resume"]
        kept = stored(store)
        assert kept > 0
        before = len(server.requests)
        again = run_limited([*args, f"hydra.run.dir={tmp_path / 'again'}"], tmp_path, None)
        assert again.returncode == 0, again.stderr[-2000:]
        resent = len(server.requests) - before
    total = stored(store)
    assert resent == total - kept  # not one of the stored answers was bought again
    assert manifest(tmp_path / "again")["llm"]["cache_hits"] == kept


@pytest.mark.slow
@pytest.mark.skipif(not _can_unshare(), reason="no user namespaces here: cannot mount a tmpfs without root")
def test_full_disk_under_the_run_directory(tmp_path) -> None:
    """The run directory on a 96 KiB tmpfs (real ENOSPC), the store outside: exit 3 naming the file, a failed
    manifest (rewritten in place when no room is left for a new copy), the store intact."""
    store = tmp_path / "store.sqlite"
    mount, copy = tmp_path / "disk", tmp_path / "copy"
    mount.mkdir()
    script = 'c="$1"; shift; mount -t tmpfs -o size=96k tmpfs "$0" || exit 97; "$@"; rc=$?; cp -a "$0" "$c"; exit $rc'
    with FakeServer() as server:
        args = llm_overrides(server.api_base, store, "game.games=8")
        prefix = ["unshare", "-rm", "sh", "-c", script, str(mount), str(copy)]
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "trustsim", *args, f"hydra.run.dir={mount}/run"],
            cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode == 97:
            pytest.skip("tmpfs cannot be mounted in a user namespace here")
        kept = stored(store)
        before = len(server.requests)
        again = run_limited([*args, f"hydra.run.dir={tmp_path / 'again'}"], tmp_path, None)
        resent = len(server.requests) - before
    run_dir = copy / "run"  # the tmpfs went with its namespace: its files were copied out
    assert done.returncode == 3, done.stderr[-3000:]
    assert "No space left on device" in done.stderr and f"{mount}/run/" in done.stderr
    assert TRACEBACK not in done.stderr
    m = manifest(run_dir)
    assert m["status"] == "failed" and "No space left on device" in m["failure"]["reason"]
    assert again.returncode == 0 and resent == stored(store) - kept


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (OSError(errno.ENOSPC, "No space left on device", "/r/events.jsonl"), "free space on the disk that holds /r"),
        (OSError(errno.EDQUOT, "Disk quota exceeded", "/r/x.csv"), "free space"),
        (OSError(errno.EACCES, "Permission denied", "/r/games.csv"), "make /r writable again"),
        (OSError(errno.EROFS, "Read-only file system", "/r/manifest.json"), "make /r writable again"),
        (OSError(errno.EIO, "Input/output error", "/r/events.jsonl"), "an I/O error"),
    ],
)  # fmt: skip
def test_write_failures_are_told_apart_with_their_advice(exc: OSError, says: str) -> None:
    failed = write_failure(exc)
    assert isinstance(failed, WriteFailed) and failed.exit_code == 3
    assert str(failed).startswith(f"cannot write {exc.filename}: ") and says in failed.resume
    assert write_failure(OSError(errno.ECONNREFUSED, "refused")) is None  # not a write: another error
    assert write_failure(ValueError("x")) is None


def test_sqlite_write_failures_name_the_store() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA max_page_count=2")
        conn.execute("CREATE TABLE t (x)")
        with pytest.raises(sqlite3.Error) as info:
            conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    finally:
        conn.close()
    failed = write_failure(info.value, Path("/s/store.sqlite"), "llm.store_path")
    assert failed is not None and str(failed).startswith(
        "cannot write /s/store.sqlite: database or disk is full"
    )
    assert "(or choose another llm.store_path)" in failed.resume
