"""manifest.json: the one writer (jobs, extractions) and the failure record of any exception."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustsim import __version__
from trustsim.rundir.schema import MANIFEST
from trustsim.rundir.writer import json_default, write_json_atomic

REASON_LIMIT = 500


def now_iso() -> str:
    """The current UTC time, ISO-8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def failure_from_exception(exc: BaseException, resume: str | None = None) -> dict[str, Any]:
    """The manifest ``failure`` record of an exception: its type, a one-line reason and what to do next.

    ``resume`` defaults to the exception's ``resume`` attribute when it has one.
    """
    reason = one_line(str(exc)) or type(exc).__name__
    if isinstance(exc, KeyboardInterrupt):
        reason = "interrupted"
    return {
        "type": type(exc).__name__,
        "reason": reason,
        "resume": resume if resume is not None else getattr(exc, "resume", None),
    }


class Manifest:
    """A run directory's ``manifest.json``, rewritten atomically at the start and the end of the job.

    The fields are those of ``docs/run_directory.md``; ``fields`` given here (run id, game, config, hashes,
    provenance...) are written in the documented order, unknown ones after them.
    """

    ORDER = (
        "trustsim_version", "run_id", "run_dir", "game", "unit", "status", "failure", "cell", "experiment", "seed",
        "runs", "config_hash", "world_hash", "config", "versions", "git", "command", "timings", "counts",
        "llm", "tables",
    )  # fmt: skip

    def __init__(self, run_dir: str | Path, **fields: Any) -> None:
        self.path = Path(run_dir) / MANIFEST
        self.started = time.perf_counter()
        base: dict[str, Any] = {
            "trustsim_version": __version__,
            "run_dir": str(Path(run_dir)),
            "status": "running",
            "failure": None,
            "cell": {},
            "timings": {"started": now_iso(), "finished": None, "wall_s": None},
            "counts": {},
            "llm": {
                "calls_sent": 0,
                "cache_hits": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cost_usd": 0.0,
            },
            "tables": {},
        }
        base.update(fields)
        self.data: dict[str, Any] = {k: base.pop(k) for k in self.ORDER if k in base}
        self.data.update(base)

    @property
    def run_id(self) -> str:
        return str(self.data.get("run_id") or "")

    def note(self, text: str) -> None:
        """Add a line to the manifest's ``notes`` (e.g. a stale lock taken over, old tables removed)."""
        self.data.setdefault("notes", []).append(text)

    def write(self) -> None:
        """Replace the file atomically; on a full disk (no room for the temporary copy) rewrite the existing
        file in place, so a run that fails for lack of space can still say so."""
        try:
            write_json_atomic(self.path, self.data)
        except OSError:
            data = (json.dumps(self.data, indent=2, default=json_default) + "\n").encode("utf-8")
            try:
                held = self.path.stat()
            except OSError:
                held = None
            if held is None or len(data) > max(held.st_size, held.st_blocks * 512):
                raise  # in place would need new blocks too: the old manifest stays whole
            with self.path.open("r+b") as f:  # the blocks the file already holds are reused
                f.write(data)
                f.truncate()

    def finish(self, status: str, failure: dict[str, Any] | None = None, **updates: Any) -> None:
        """Record the final status (``complete``/``failed``), the failure, timings and ``updates``
        (``cell``, ``counts``, ``llm``, ``tables``...; a None value leaves the field as it is)."""
        self.data.update(status=status, failure=failure)
        self.data.update({k: v for k, v in updates.items() if v is not None})
        self.data["timings"].update(finished=now_iso(), wall_s=round(time.perf_counter() - self.started, 3))
        self.write()

    def fail(self, exc: BaseException, resume: str | None = None, **updates: Any) -> dict[str, Any]:
        """Finish as ``failed`` with the failure record of ``exc``; returns that record."""
        failure = failure_from_exception(exc, resume)
        self.finish("failed", failure, **updates)
        return failure


def write_failed_manifest(
    run_dir: str | Path, exc: BaseException, resume: str | None = None, **fields: Any
) -> dict[str, Any]:
    """A ``failed`` manifest for a job that stopped before it started (e.g. a config error)."""
    manifest = Manifest(run_dir, **fields)
    return manifest.fail(exc, resume)
