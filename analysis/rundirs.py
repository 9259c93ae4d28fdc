"""Discover run directories and read their manifests, events and CSV tables.

A run directory is any directory holding ``manifest.json`` (see ``docs/run_directory.md``); a sweep
directory is any directory containing run directories, found recursively. Runs whose status is not
``complete`` are reported and excluded unless ``include_incomplete=True``.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
EVENTS = "events.jsonl"


class RunDirError(ValueError):
    """A path given to the analysis is missing, empty or not a readable run directory."""


class DataWarning(UserWarning):
    """Damaged or suspicious input that the analysis worked around (message says where)."""


@dataclass(frozen=True)
class Run:
    """One run directory and its parsed manifest."""

    path: Path
    manifest: dict[str, Any]

    @property
    def run_id(self) -> str:
        """The manifest's run id (falls back to the directory name)."""
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def status(self) -> str:
        """``running``, ``complete`` or ``failed`` (``unknown`` when absent)."""
        return str(self.manifest.get("status") or "unknown")

    @property
    def game(self) -> str:
        """Game family (``escape_room``, ``reliance``, ``arena``)."""
        return str(self.manifest.get("game") or "")

    @property
    def cell(self) -> dict[str, Any]:
        """Cell keys identifying the experimental cell."""
        cell = self.manifest.get("cell") or {}
        return dict(cell) if isinstance(cell, dict) else {}

    @property
    def failure_reason(self) -> str:
        """The failure reason recorded in the manifest, if any."""
        failure = self.manifest.get("failure")
        if isinstance(failure, dict):
            return str(failure.get("reason") or "")
        return ""


@dataclass
class Discovery:
    """Result of :func:`discover_runs`: the runs kept and those set aside, with reasons."""

    runs: list[Run] = field(default_factory=list)
    excluded: list[tuple[Path, str]] = field(default_factory=list)

    def report(self) -> str:
        """One line per excluded run, for users (empty string when none)."""
        return "\n".join(f"excluded {p}: {why}" for p, why in self.excluded)


def find_run_dirs(root: str | os.PathLike[str]) -> list[Path]:
    """All directories under ``root`` (itself included) that hold ``manifest.json``, sorted.

    A run directory's subdirectories are not searched further.

    Raises:
        RunDirError: When ``root`` does not exist or is not a directory.
    """
    base = Path(root)
    if not base.exists():
        raise RunDirError(f"{base}: no such directory")
    if not base.is_dir():
        raise RunDirError(f"{base}: not a directory")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        if MANIFEST in filenames:
            found.append(Path(dirpath))
            dirnames[:] = []
        else:
            dirnames.sort()
    return sorted(found)


def read_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a run directory's ``manifest.json``.

    Raises:
        RunDirError: When the manifest is missing, not JSON or not a JSON object.
    """
    path = Path(run_dir) / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RunDirError(f"{path}: missing manifest") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def discover_runs(
    paths: Iterable[str | os.PathLike[str]],
    *,
    include_incomplete: bool = False,
    game: str | None = None,
) -> Discovery:
    """Find and vet every run directory under the given run or sweep directories.

    Args:
        paths: Run directories and/or sweep directories, in any mix.
        include_incomplete: Keep ``running``/``failed`` runs instead of excluding them.
        game: Keep only runs of this game family (others are reported as excluded).

    Returns:
        A :class:`Discovery` with kept runs (deduplicated, sorted by path) and excluded ones with reasons.
    """
    out = Discovery()
    seen: set[Path] = set()
    for root in paths:
        for run_dir in find_run_dirs(root):
            resolved = run_dir.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            try:
                manifest = read_manifest(run_dir)
            except RunDirError as exc:
                out.excluded.append((run_dir, str(exc)))
                continue
            run = Run(run_dir, manifest)
            if game is not None and run.game and run.game != game:
                out.excluded.append((run_dir, f"game is {run.game!r}, not {game!r}"))
                continue
            if run.status != "complete" and not include_incomplete:
                why = f"status {run.status!r}"
                if run.failure_reason:
                    why += f" ({run.failure_reason})"
                out.excluded.append((run_dir, why + "; pass include_incomplete to keep it"))
                continue
            out.runs.append(run)
    out.runs.sort(key=lambda r: str(r.path))
    for path, why in out.excluded:
        log.info("excluded %s: %s", path, why)
    return out


def iter_events(run_dir: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield the events of ``events.jsonl`` up to the first damaged line.

    A line that is not a JSON object (e.g. a truncated final write) stops the reading with a
    :class:`DataWarning` naming the file and line number; events before it are yielded.

    Raises:
        RunDirError: When the file does not exist.
    """
    path = Path(run_dir) / EVENTS
    if not path.exists():
        raise RunDirError(f"{path}: missing events file")
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as exc:
                warnings.warn(
                    f"{path}:{lineno}: damaged event ({exc.msg}); read {lineno - 1} lines, ignoring the rest",
                    DataWarning,
                    stacklevel=2,
                )
                return
            if not isinstance(event, dict):
                warnings.warn(
                    f"{path}:{lineno}: event is not a JSON object; ignoring the rest",
                    DataWarning,
                    stacklevel=2,
                )
                return
            yield event


def read_events(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All readable events of a run (see :func:`iter_events`)."""
    return list(iter_events(run_dir))


def read_table(
    run: Run, name: str, *, cell_keys: bool = True, usecols: Iterable[str] | None = None
) -> pd.DataFrame | None:
    """Read one CSV table of a run, with the manifest's cell keys and run id attached.

    Columns already in the CSV win over manifest cell keys of the same name (a mismatch is warned about).

    Args:
        run: The run.
        name: File name, e.g. ``games.csv``.
        cell_keys: Attach ``run_id`` and the manifest ``cell`` keys as columns.
        usecols: Read only these columns (those absent from the file are ignored).

    Returns:
        The table, or None when the file does not exist.

    Raises:
        RunDirError: When the file exists but cannot be parsed as CSV.
    """
    path = run.path / name
    if not path.exists():
        return None
    try:
        wanted = None if usecols is None else set(usecols)
        df = pd.read_csv(
            path, keep_default_na=True, usecols=None if wanted is None else lambda c: c in wanted
        )
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: unreadable CSV ({exc})") from exc
    if not cell_keys:
        return df
    if "run_id" not in df.columns:
        df.insert(0, "run_id", run.run_id)
    for key, value in run.cell.items():
        if key in df.columns:
            vals = df[key].dropna().astype(str).unique()
            if len(vals) and any(v != str(value) for v in vals):
                warnings.warn(
                    f"{path}: column {key!r} has {sorted(vals)} but manifest cell says {value!r}; "
                    "using the table",
                    DataWarning,
                    stacklevel=2,
                )
        else:
            df[key] = value
    return df


def read_tables(runs: Iterable[Run], name: str, *, cell_keys: bool = True) -> pd.DataFrame:
    """Concatenate one CSV table over many runs (runs without the file are skipped)."""
    frames = [df for run in runs if (df := read_table(run, name, cell_keys=cell_keys)) is not None]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)
