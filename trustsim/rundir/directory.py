"""Opening a run directory for a new job: refusing a folder that is not one, the lock, and clearing what a
previous run there left."""

from __future__ import annotations

import json
from pathlib import Path

from trustsim.rundir.lock import RunDirLock, acquire_checked
from trustsim.rundir.schema import EVENTS, MANIFEST


def clear_previous_run(run_dir: str | Path) -> list[str]:
    """Remove the files of the run that used ``run_dir`` before (call it while holding the lock).

    The previous manifest lists its tables (``tables``); for an older manifest without that list, every
    ``*.csv`` in the directory counts as its table. ``events.jsonl`` and ``manifest.json`` are replaced by the
    new run. Returns notes for the user (empty when the directory held no run).
    """
    run_dir = Path(run_dir)
    manifest_path = run_dir / MANIFEST
    if not manifest_path.exists():
        return []
    try:
        previous = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(previous, dict):
            previous = {}
    except (OSError, ValueError):
        previous = {}
    listed = previous.get("tables")
    if isinstance(listed, dict) and listed:
        tables = [run_dir / f"{name}.csv" for name in listed]
    else:
        tables = sorted(run_dir.glob("*.csv"))
    removed = []
    for path in [*tables, run_dir / EVENTS, manifest_path]:
        if path.is_file() and path.parent == run_dir:
            path.unlink()
            removed.append(path.name)
    if not removed:
        return []
    who = previous.get("run_id") or "unknown run"
    game = previous.get("game") or "unknown game"
    return [f"{run_dir} held a previous run ({who}, {game}); removed its files: {', '.join(removed)}"]


def open_run_dir(run_dir: str | Path) -> tuple[RunDirLock, list[str]]:
    """Refuse a folder that is not a run directory (:func:`check_run_dir`: :class:`RunDirForeign`), lock
    ``run_dir`` (raises :class:`~trustsim.rundir.lock.RunDirBusy` at once if a live job holds it) and clear the
    previous run's files. Returns the held lock and notes for the user and the manifest."""
    lock = acquire_checked(run_dir)
    try:
        notes = ([lock.note] if lock.note else []) + clear_previous_run(run_dir)
    except BaseException:
        lock.release()
        raise
    return lock, notes
