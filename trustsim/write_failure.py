"""A write that failed mid-run (disk full, I/O error, permission lost): one error, one line, the right advice.

Any writer of a job (the run recorder, the manifest, ``.hydra/``, the request store) may meet a full disk
(``ENOSPC``, a quota, a file-size limit), an I/O error or a folder that turned read-only. The job then stops
with a ``failed`` manifest (if it can still be written), exit code 3 and a reason that names the path; the
request store keeps every answer already stored, so re-running the same command once the cause is fixed
sends only what is missing. :func:`write_failure` tells such an error from any other.
"""

from __future__ import annotations

import errno
import sqlite3
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
        code, reason, where = _SQLITE[exc.sqlite_errorcode & 0xFF], str(exc), path  # type: ignore[attr-defined]
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
