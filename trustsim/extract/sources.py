"""Where reasoning texts come from: each game declares its sources (``GameSpec.reasoning``: ``--kind`` name ->
:class:`trustsim.contract.ReasoningSource`); the helpers here are the ones every source shares."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

from trustsim.contract import ReasoningSource, games
from trustsim.rundir import EVENTS, DataWarning, RunDirError, iter_events, read_manifest


class SourceError(ValueError):
    """A log directory cannot be read (message names the file and the problem)."""


def reasoning_sources() -> dict[str, tuple[str, ReasoningSource]]:
    """Every registered source by ``--kind`` name, with its game: the sources of the game that declares the
    default source first, then the other games' in registry order (each game's in its declared order)."""
    specs = sorted(games().values(), key=lambda spec: not any(s.default for s in spec.reasoning.values()))
    return {kind: (spec.name, source) for spec in specs for kind, source in spec.reasoning.items()}


def default_kind() -> str | None:
    """The ``--kind`` of the source declared ``default`` (None when no game declares one)."""
    return next((kind for kind, (_, source) in reasoning_sources().items() if source.default), None)


def run_dirs(root: Path, kind: str) -> list[Path]:
    """The run directories (``manifest.json``) under ``root``, sorted; a SourceError when there is none."""
    runs = sorted(p.parent for p in root.rglob("manifest.json")) if root.is_dir() else []
    if not runs:
        raise SourceError(f"{root}: no {kind} run directory (manifest.json) found")
    return runs


def run_events(run_dir: Path) -> tuple[dict, Iterator[dict]] | None:
    """A run directory's manifest and its readable events, following the damage rule of
    :mod:`trustsim.rundir`: damaged event lines are skipped with a warning naming the file and line; a run
    whose manifest or events file is unreadable is skipped with a warning (None)."""
    try:
        manifest = read_manifest(run_dir)
        if not (run_dir / EVENTS).is_file():
            raise RunDirError(f"{run_dir / EVENTS}: missing (or not a file)")
    except RunDirError as exc:
        warnings.warn(f"{exc}; skipped this run", DataWarning, stacklevel=3)
        return None
    return manifest, iter_events(run_dir)
