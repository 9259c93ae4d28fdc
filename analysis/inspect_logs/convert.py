"""Write the run directories kept in Inspect logs (one per sample and epoch) as trustsim run directories.

``LOG`` may be a log file (``.eval`` or ``.json``) or a folder of logs. Each log becomes a sweep-like folder
``<out>/<log name>/`` with one run directory per sample (``<sample id>``, plus ``-epoch<k>`` when the eval ran
several epochs): the job's events and tables byte for byte as the sample's job wrote them, and its manifest
with ``run_dir`` set to where it now is and an ``inspect`` block naming the log, task, sample and epoch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.inspect_logs import RUN_FILES_KEY
from analysis.rundirs import MANIFEST, RunDirError

LOG_SUFFIXES = (".eval", ".json")


@dataclass
class Converted:
    """What :func:`write_run_dirs` wrote, and what it left out (log or sample, reason)."""

    run_dirs: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    logs: int = 0


def _inspect_log_api() -> Any:
    try:
        from inspect_ai import log
    except ImportError:
        raise RunDirError(
            "reading Inspect logs needs inspect-ai: pip install -e '.[inspect]' (or make setup)"
        ) from None
    return log


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """The log files named or held (recursively) by ``paths``, in order, each once."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES)
        elif path.is_file():
            out.append(path)
        else:
            raise RunDirError(f"{path}: no such Inspect log file or folder")
    return list(dict.fromkeys(out))


def safe_name(text: str) -> str:
    """A folder name from a sample id or log name (anything but letters, digits, ``.``, ``_``, ``-`` is ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "sample"


def write_run_dir(dest: Path, files: dict[str, str], inspect: dict[str, Any]) -> None:
    """One run directory from a sample's files (the manifest located and its provenance added). Every file
    is checked before anything is written: a plain name, text, and a manifest that is a JSON object.

    Raises:
        RunDirError: naming the sample and what is wrong (nothing written).
    """
    sample = f"sample {inspect.get('sample')!r}"
    out: dict[str, str] = {}
    for name, text in files.items():
        if not isinstance(name, str) or name in ("", ".", "..") or Path(name).name != name or "\\" in name:
            raise RunDirError(f"{sample}: file name {str(name)[:80]!r} is not a plain name")
        if not isinstance(text, str):
            raise RunDirError(f"{sample}: file {name!r} holds {type(text).__name__}, not text")
        if name == MANIFEST:
            try:
                manifest = json.loads(text)
            except ValueError as exc:
                raise RunDirError(f"{sample}: {MANIFEST} is not JSON ({exc})") from None
            if not isinstance(manifest, dict):
                raise RunDirError(f"{sample}: {MANIFEST} is a JSON {type(manifest).__name__}, not an object")
            manifest["run_dir"] = str(dest)
            manifest["inspect"] = inspect
            text = json.dumps(manifest, indent=2) + "\n"
        out[name] = text
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in out.items():
        (dest / name).write_text(text, encoding="utf-8")


def write_run_dirs(paths: Sequence[str | Path], out: str | Path) -> Converted:
    """Write every trustsim run directory held by the Inspect logs ``paths`` under ``out``."""
    api = _inspect_log_api()
    result = Converted()
    out = Path(out)
    for path in log_files(paths):
        try:
            log = api.read_eval_log(str(path), resolve_attachments=True)
        except Exception as exc:  # not a log, or a damaged one: named, the others still converted
            result.skipped.append((str(path), f"not a readable Inspect log ({type(exc).__name__}: {exc})"))
            continue
        result.logs += 1
        samples = log.samples or []
        if not samples:
            result.skipped.append((str(path), f"no samples (status {log.status})"))
            continue
        epochs = len({s.epoch for s in samples}) > 1
        base = out / safe_name(path.stem)
        for sample in samples:
            files = (sample.store or {}).get(RUN_FILES_KEY)
            label = f"{sample.id}" + (f" epoch {sample.epoch}" if epochs else "")
            if not isinstance(files, dict) or MANIFEST not in files:
                why = "no trustsim run directory in its store (not a trustsim task, or it failed before its job)"
                result.skipped.append((f"{path}: sample {label}", why))
                continue
            name = safe_name(str(sample.id)) + (f"-epoch{sample.epoch}" if epochs else "")
            if base / name in result.run_dirs:  # a second sample of that id would overwrite the first
                why = f"another sample of this log has the same id (folder {name}); only the first is kept"
                result.skipped.append((f"{path}: sample {label}", why))
                continue
            provenance = {"log": str(path), "task": log.eval.task, "eval_id": log.eval.eval_id,
                          "sample": sample.id, "epoch": sample.epoch, "model": log.eval.model}  # fmt: skip
            try:
                write_run_dir(base / name, files, provenance)
            except RunDirError as exc:
                result.skipped.append((f"{path}: sample {label}", str(exc)))
                continue
            result.run_dirs.append(base / name)
    if not result.run_dirs:
        reasons = "; ".join(f"{what}: {why}" for what, why in result.skipped[:3]) or "no log found"
        raise RunDirError(f"no trustsim run directory in {', '.join(map(str, paths))} ({reasons})")
    return result
