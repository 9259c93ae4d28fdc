"""The reference study's raw logs (Escape-room-v2, MIT licence), shipped with trustsim as a compressed archive.

``analysis/data/escape-room-v2.tar.gz`` holds the folder ``escape-room-v2/`` with its ``LICENSE`` (MIT,
Copyright (c) 2026 Yujiao Chen) and ``README.md`` (what the logs are), ``runs/`` (170 runs with memory) and
``examples-74f0fd1/`` (two later example runs). It is package data, so it is there after ``pip install``
too. :func:`extract_reference` unpacks it (safely: regular files and folders only, inside the target);
:func:`reference_dir` keeps one unpacked copy in the user's cache for ``python -m analysis trust --reference``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

DATASET = "escape-room-v2"
ARCHIVE = Path(__file__).resolve().parent / "data" / f"{DATASET}.tar.gz"
MARKER = ".trustsim-archive-sha256"
"""Written into an unpacked copy: the archive's checksum, so a stale or partial copy is replaced."""


class ReferenceDataError(RuntimeError):
    """The shipped archive is missing or damaged, or the target cannot be written."""


def archive_sha256(path: Path = ARCHIVE) -> str:
    """SHA-256 of the archive file."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ReferenceDataError(f"{path}: the reference archive is missing ({exc.strerror})") from exc


def _safe_members(tar: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    members = []
    for m in tar.getmembers():
        target = (dest / m.name).resolve()
        if not (m.isfile() or m.isdir()) or not target.is_relative_to(dest.resolve()):
            raise ReferenceDataError(
                f"{ARCHIVE}: unexpected member {m.name!r} (only plain files are shipped)"
            )
        if m.name != DATASET and not m.name.startswith(DATASET + "/"):
            raise ReferenceDataError(f"{ARCHIVE}: member {m.name!r} is outside {DATASET}/")
        members.append(m)
    return members


def extract_reference(dest: str | os.PathLike[str], *, archive: Path = ARCHIVE) -> Path:
    """Unpack the archive into ``dest`` (created) and return ``dest/escape-room-v2``.

    An existing copy made from the same archive is reused; any other content at ``dest/escape-room-v2``
    is an error (nothing is overwritten).

    Raises:
        ReferenceDataError: When the archive is missing or damaged, the target exists with other content, or
            ``dest`` cannot be written.
    """
    dest = Path(dest)
    target = dest / DATASET
    digest = archive_sha256(archive)
    marker = target / MARKER
    if marker.is_file() and marker.read_text(encoding="utf-8").strip() == digest:
        return target
    if target.exists():
        raise ReferenceDataError(
            f"{target} exists and is not an unpacked copy of this archive; remove it or choose another folder"
        )
    try:
        dest.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{DATASET}-", dir=dest))
    except OSError as exc:
        raise ReferenceDataError(f"{dest}: cannot write there ({exc.strerror})") from exc
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = _safe_members(tar, tmp)
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
                tar.extractall(tmp, members=members, filter="data")
            else:  # pragma: no cover - members were vetted above
                tar.extractall(tmp, members=members)
        (tmp / DATASET / MARKER).write_text(digest + "\n", encoding="utf-8")
        (tmp / DATASET).rename(target)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if marker.is_file() and marker.read_text(encoding="utf-8").strip() == digest:
            return target  # another process unpacked the same archive first
        raise ReferenceDataError(f"cannot unpack {archive} into {dest}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def cache_root() -> Path:
    """Where :func:`reference_dir` keeps its copy: ``$TRUSTSIM_CACHE``, else ``$XDG_CACHE_HOME/trustsim``,
    else ``~/.cache/trustsim``."""
    if os.environ.get("TRUSTSIM_CACHE"):
        return Path(os.environ["TRUSTSIM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "trustsim"


def reference_dir() -> Path:
    """An unpacked copy of the shipped logs in the user's cache (unpacked on first use, about 24 MB)."""
    return extract_reference(cache_root() / f"reference-{archive_sha256()[:12]}")
