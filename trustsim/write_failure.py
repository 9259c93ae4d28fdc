"""A write that failed mid-run (disk full, I/O error, permission lost): one error, one line, the right advice.

Any writer of a job (the run recorder, the manifest, ``.hydra/``, the request store) may meet a full disk
(``ENOSPC``, a quota, a file-size limit), an I/O error or a folder that turned read-only. The job then stops
with a ``failed`` manifest (if it can still be written), exit code 3 and a reason that names the path; the
request store keeps every answer already stored, so re-running the same command once the cause is fixed
sends only what is missing. :func:`write_failure` tells such an error from any other. So that the failure can
be recorded on a disk that is full, the job keeps a small reserve file in its run directory while it runs
(:func:`reserve_space`) and frees it before its last manifest write; a job log that can no longer be written
says so once (:func:`quiet_log_files`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import sqlite3
import sys
import weakref
from pathlib import Path

from trustsim.errors import TrustsimError

EXIT_WRITE = 3
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}
_IO = {errno.EIO, errno.ESTALE, errno.ENXIO}
_SQLITE = {13: errno.ENOSPC, 10: errno.EIO, 8: errno.EROFS, 3: errno.EACCES, 14: errno.EACCES}  # FULL, IOERR,
# READONLY, PERM, CANTOPEN (primary result codes)


class WriteFailed(TrustsimError):
    """A job could not write ``path``; ``resume`` says what to fix before re-running."""

    exit_code = EXIT_WRITE

    def __init__(self, path: str | Path, reason: str, resume: str) -> None:
        self.path = str(path)
        self.resume = resume
        super().__init__(f"cannot write {path}: {reason}")


def write_failure(
    exc: BaseException, path: str | Path | None = None, key: str | None = None
) -> WriteFailed | None:
    """The :class:`WriteFailed` an ``OSError`` or SQLite error stands for (``path``: the file when the error
    does not name one; ``key``: the setting that chooses it, e.g. ``llm.store_path``); None for any other."""
    if isinstance(exc, WriteFailed):
        return exc
    if isinstance(exc, OSError) and exc.errno in _FULL | _DENIED | _IO:
        code, reason = exc.errno, exc.strerror or str(exc)
        where = exc.filename or path
    elif isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", -1) & 0xFF) in _SQLITE:
        code, reason, where = _SQLITE[exc.sqlite_errorcode & 0xFF], str(exc), path
    else:
        return None
    where = where if where is not None else "the run directory"
    return WriteFailed(where, reason, advice(code, Path(str(where)), key))


def advice(code: int, path: Path, key: str | None = None) -> str:
    """What to do before re-running, by cause (full, read-only, I/O error)."""
    other = f" (or choose another {key})" if key else " (or choose another hydra.run.dir)"
    folder = path.parent if path.suffix else path
    if code in _FULL:
        first = f"free space on the disk that holds {folder}{other}"
    elif code in _DENIED:
        first = f"make {folder} writable again{other}"
    else:
        first = f"check the disk that holds {folder} (an I/O error){other}"
    return f"{first}, then re-run the same command: answers already in the request store are replayed, not sent again"


_QUIETED: weakref.WeakSet[logging.Handler] = weakref.WeakSet()
"""The file handlers :func:`quiet_log_files` has set up."""


def quiet_log_files() -> None:
    """A job log file that can no longer be written (the disk holding the run directory is full) says so once
    on stderr and is dropped, instead of printing a traceback for every later record (logging's default).
    Applies to the file handlers configured now (Hydra's ``<job>.log``), one handler at a time."""
    loggers = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    for logger in loggers:
        for handler in list(logger.handlers):
            if isinstance(handler, logging.FileHandler) and handler not in _QUIETED:
                _QUIETED.add(handler)
                # logging has no per-handler error hook but this method: replaced on this one handler
                handler.handleError = functools.partial(_drop_log_file, logger, handler)  # type: ignore[method-assign]


def _drop_log_file(logger: logging.Logger, handler: logging.FileHandler, record: logging.LogRecord) -> None:
    exc = sys.exc_info()[1]
    if not isinstance(exc, OSError):
        logging.Handler.handleError(handler, record)
        return
    logger.removeHandler(handler)
    with contextlib.suppress(Exception):
        handler.close()
    print(
        f"trustsim: the job log {handler.baseFilename} cannot be written ({_reason(exc)}); it stops here",
        file=sys.stderr,
    )


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]


RESERVE = ".trustsim-reserve"
RESERVE_BYTES = 32 * 1024


def reserve_space(run_dir: Path) -> Path | None:
    """Set aside ``RESERVE_BYTES`` in the run directory (a file of zeros, deleted when the job ends): on a disk
    that fills up during the run, freeing it leaves room to record the failure in the manifest. None when
    even that cannot be written (the job then runs without it)."""
    path = Path(run_dir) / RESERVE
    try:
        with path.open("wb") as f:
            f.write(bytes(RESERVE_BYTES))
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return path


def release_space(reserve: Path | None) -> None:
    """Give the reserved space back (before the manifest's last write)."""
    if reserve is not None:
        with contextlib.suppress(OSError):
            reserve.unlink()
