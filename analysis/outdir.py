"""The ``--out`` folder of an analysis: clear what the subcommand wrote there before, refuse foreign files.

Each subcommand records the files it wrote in ``<out>/.analysis-files.json`` (``{subcommand: [files]}``).
The next run of the same subcommand into that folder removes those files first, so no stale figure or table
survives next to a report that no longer mentions it. A folder holding files that no analysis wrote is
refused unless ``--force`` is given (then files of the same name are overwritten and the others kept); the
refusal comes before anything is removed, so a refused run leaves the folder exactly as it was. A folder
holding another subcommand's report is refused the same way (two reports in one folder would overwrite each
other's ``report.md``): each subcommand writes to a folder of its own. A subfolder with its own record
(``report/yardstick/`` written by ``analysis yardstick --out report/yardstick/``) is another analysis's
output, not foreign: the files its record lists are left alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RECORD = ".analysis-files.json"


class OutDirError(ValueError):
    """The ``--out`` folder cannot be used (the message says why and what to do)."""


def _snapshot(out: Path) -> dict[str, tuple[int, int]]:
    """``{path relative to out: (mtime, size)}`` of every file below ``out`` except the records."""
    snap = {}
    for dirpath, _, filenames in os.walk(out):
        for name in filenames:
            if name == RECORD:
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(out).as_posix()
            st = path.stat()
            snap[rel] = (st.st_mtime_ns, st.st_size)
    return snap


def _read_record(out: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((out / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(f) for f in v] for k, v in data.items() if isinstance(v, list)}


def _owned_by_nested_analyses(out: Path) -> set[str]:
    """Files (relative to ``out``) listed in the record of a subfolder another analysis wrote into."""
    owned: set[str] = set()
    for dirpath, _, filenames in os.walk(out):
        folder = Path(dirpath)
        if folder == out or RECORD not in filenames:
            continue
        prefix = folder.relative_to(out).as_posix()
        owned.update(f"{prefix}/{rel}" for files in _read_record(folder).values() for rel in files)
    return owned


def _remove(out: Path, rel: str) -> bool:
    path = (out / rel).resolve()
    if out.resolve() not in path.parents or not path.is_file():
        return False
    path.unlink()
    parent = path.parent
    while parent != out.resolve() and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
    return True


@contextmanager
def owned_output(out: str | os.PathLike[str], command: str, *, force: bool = False) -> Iterator[list[str]]:
    """Prepare ``out`` for ``command`` and record what the block writes there.

    Yields the list of files removed from a previous run of ``command`` (empty when none).

    Raises:
        OutDirError: ``out`` is the filesystem root or a file, or holds files no analysis wrote or another
            subcommand's report, and ``force`` is false.
    """
    out = Path(out)
    if out.resolve() == Path(out.resolve().anchor):
        raise OutDirError(f"--out {out}: the filesystem root; choose a folder of its own, e.g. --out report/")
    removed: list[str] = []
    record = _read_record(out) if out.is_dir() else {}
    if out.exists():
        if not out.is_dir():
            raise OutDirError(f"--out {out}: is a file, not a folder")
        nested = _owned_by_nested_analyses(out)
        owned = {rel for files in record.values() for rel in files} | nested
        foreign = sorted(rel for rel in _snapshot(out) if rel not in owned)
        if foreign and not force:  # refuse before removing anything
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise OutDirError(
                f"--out {out}: the folder holds files that no analysis wrote ({shown}); nothing was changed. "
                "Choose a new or empty folder, or pass --force to write into it anyway (same-name files are "
                "overwritten, others kept)"
            )
        others = sorted(name for name, files in record.items() if name != command and files)
        if others and not force:
            raise OutDirError(
                f"--out {out}: the folder holds the report of `analysis {others[0]}`; nothing was changed. "
                f"Write `analysis {command}` to a folder of its own (e.g. --out {out / command}/), or pass "
                "--force to write into it anyway (same-name files such as report.md are overwritten)"
            )
        removed = [rel for rel in record.pop(command, []) if rel not in nested and _remove(out, rel)]
    out.mkdir(parents=True, exist_ok=True)
    before = _snapshot(out)
    try:
        yield removed
    finally:
        written = sorted(rel for rel, st in _snapshot(out).items() if before.get(rel) != st)
        for files in record.values():  # a file rewritten by this command is now this command's
            files[:] = [f for f in files if f not in written]
        record[command] = written
        record = {k: v for k, v in record.items() if v}
        if record:
            (out / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        else:
            (out / RECORD).unlink(missing_ok=True)
