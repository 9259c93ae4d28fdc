"""A folder a job must not write into: the working directory, ``/``, or one holding files no trustsim run
wrote (a user's own tables, say). Checked before anything is written there, so a refused job leaves it as it
was; a trustsim run directory (a previous run, or an interrupted one to resume) passes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trustsim.errors import ConfigError
from trustsim.rundir.schema import EVENTS, LOCK, MANIFEST

ALWAYS_OWNED = frozenset({
    LOCK, ".trustsim-reserve", ".trustsim-write-test", "__main__.log", "preview.json",
    ".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
})  # fmt: skip
"""Files any trustsim job may have written into its run directory before its manifest (relative paths)."""
SWEEP_OWNED = frozenset({"multirun.yaml", "jobs.csv", ".trustsim-write-test"})
"""Files a sweep writes into its sweep directory itself (each job has its own subfolder)."""
SHOWN = 5
ANALYSIS_RECORD = ".analysis-files.json"  # what an analysis wrote into its --out folder (analysis/outdir.py)


class RunDirForeign(ConfigError):
    """A run (or sweep) directory that is the working directory, ``/``, or holds files no trustsim run wrote:
    the job writes nothing there (exit 2)."""

    resume = "Choose a new or empty folder (e.g. hydra.run.dir=outputs/runs/my-run), or move those files away"


def _trustsim_manifest(run_dir: Path) -> dict[str, Any] | None:
    """The folder's ``manifest.json`` when trustsim wrote it (a JSON object with ``trustsim_version``)."""
    try:
        data = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "trustsim_version" in data else None


def _files(folder: Path, *, top_only: bool = False) -> list[str]:
    """Every file (and symlink) below ``folder``, relative, sorted; with ``top_only``: its own files only."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath).relative_to(folder)
        found += [(base / n).as_posix() for n in filenames]
        found += [(base / n).as_posix() for n in dirnames if (Path(dirpath) / n).is_symlink()]
        if top_only:
            break
    return sorted(found)


def foreign_files(run_dir: str | Path) -> list[str]:
    """The files of ``run_dir`` (relative paths) that no trustsim job wrote there: all but the lock, the
    ``.hydra/`` record and job log, and, when the folder holds a trustsim ``manifest.json``, that manifest,
    ``events.jsonl``, its tables (those the manifest lists; every ``*.csv`` when it lists none, as a killed job
    leaves it) and log files; and in a subfolder an analysis wrote (``analysis ... --out RUN/report``), the
    files its ``.analysis-files.json`` lists (a job never writes there). A folder that does not exist or is
    empty has none."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return []
    manifest = _trustsim_manifest(run_dir)
    owned = set(ALWAYS_OWNED) | _analysis_outputs(run_dir)
    tables: list[str] | None = None
    if manifest is not None:
        owned |= {MANIFEST, EVENTS}
        listed = manifest.get("tables")
        tables = [f"{name}.csv" for name in listed] if isinstance(listed, dict) and listed else None
        owned |= set(tables or [])
    foreign = []
    for rel in _files(run_dir):
        top = "/" not in rel
        if rel in owned:
            continue
        if (
            manifest is not None
            and top
            and (rel.endswith(".log") or (tables is None and rel.endswith(".csv")))
        ):
            continue
        foreign.append(rel)
    return foreign


def _analysis_outputs(run_dir: Path) -> set[str]:
    """Files (relative to ``run_dir``) that an analysis recorded writing into a subfolder of it."""
    owned: set[str] = set()
    for record in run_dir.glob(f"*/**/{ANALYSIS_RECORD}"):
        prefix = record.parent.relative_to(run_dir).as_posix()
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            owned.add(f"{prefix}/{ANALYSIS_RECORD}")
            owned.update(f"{prefix}/{f}" for files in data.values() if isinstance(files, list) for f in files)
    return owned


def _advice(key: str) -> str:
    """What to do about a refused folder, named by the option that chose it."""
    example = f"{key} outputs/my-run" if key.startswith("--") else f"{key}=outputs/runs/my-run"
    return f"Choose a new or empty folder (e.g. {example}), or move those files away"


def _shown(files: list[str]) -> str:
    more = f" and {len(files) - SHOWN} more" if len(files) > SHOWN else ""
    return ", ".join(files[:SHOWN]) + more


def refuse_special(folder: Path, key: str = "hydra.run.dir") -> None:
    """Refuse the working directory itself and the filesystem root (``hydra.run.dir=``, ``.``, ``/``)."""
    resolved = folder.resolve()
    if resolved == Path.cwd().resolve():
        raise RunDirForeign(
            key,
            f"'{folder}' is the working directory itself ({resolved}); a run never writes there: name a folder "
            f"of its own, e.g. {key}=outputs/runs/my-run",
        )
    if resolved.parent == resolved:  # the filesystem root
        raise RunDirForeign(
            key,
            f"'{folder}' is the filesystem root; a run never writes there: name a folder of its own, "
            f"e.g. {key}=outputs/runs/my-run",
        )


def check_run_dir(run_dir: str | Path, key: str = "hydra.run.dir") -> None:
    """Refuse ``run_dir`` before anything is written there: the working directory, ``/``, or a folder holding
    files no trustsim job wrote (:func:`foreign_files`). A trustsim run directory (a previous run, an
    interrupted one to resume) passes.

    Raises:
        RunDirForeign: naming the folder, the first foreign files and what to do.
    """
    folder = Path(run_dir)
    refuse_special(folder, key)
    foreign = foreign_files(folder)
    if foreign:
        raise RunDirForeign(
            key,
            f"{folder} is not a trustsim run directory: it holds files that no trustsim run wrote "
            f"({_shown(foreign)}); nothing was written there. {_advice(key)}",
        )


def check_sweep_dir(sweep_dir: str | Path, key: str = "hydra.sweep.dir") -> None:
    """Refuse a sweep directory that is the working directory, ``/``, or holds files of its own (at its top)
    that no sweep wrote; its subfolders are its jobs' run directories, each checked by its job."""
    folder = Path(sweep_dir)
    refuse_special(folder, key)
    if not folder.is_dir():
        return
    foreign = [f for f in _files(folder, top_only=True) if f not in SWEEP_OWNED]
    if foreign:
        raise RunDirForeign(
            key,
            f"{folder} is not a trustsim sweep directory: it holds files that no trustsim sweep wrote "
            f"({_shown(foreign)}); nothing was written there. Choose a new or empty folder (e.g. "
            f"{key}=outputs/sweeps/my-sweep), or move those files away",
        )
