"""One Hydra job → one run directory: manifest lifecycle around a game's runner."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustsim import __version__
from trustsim.config import config_hash, validate_top, world_hash
from trustsim.errors import ConfigError, TrustsimError
from trustsim.progress import make_progress
from trustsim.records import RunRecorder, write_json_atomic
from trustsim.secrets import redact, redact_assignments, scrub_files
from trustsim.seeding import Seeder
from trustsim.versions import git_revision, package_versions

RESUME_HINT = "re-run the same command to resume: finished requests are replayed from the request store"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def load_runner(path: str) -> tuple[Callable[[JobContext], None], Callable[[dict[str, Any]], None] | None]:
    """Import ``package.module.function``; also return the module's optional ``validate(cfg)``."""
    module_name, _, func_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
        runner = getattr(module, func_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("game.runner", f"cannot load {path!r}: {exc}") from None
    return runner, getattr(module, "validate", None)


class JobContext:
    """What a game's runner gets: config, run directory, recorder, seeds, LLM client, progress, counters."""

    def __init__(self, cfg: dict[str, Any], run_dir: Path, recorder: RunRecorder) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.recorder = recorder
        self.config_hash = config_hash(cfg)
        self.world_hash = world_hash(cfg)
        # Deterministic: the same resolved config gives the same results, hence the same id.
        self.run_id = f"{cfg.get('name', 'run')}-{self.config_hash[:12]}"
        self.seeder = Seeder(self.world_hash)
        self.cell: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self._llm: Any = None

    @property
    def llm(self) -> Any:
        """The job's LLM client, built on first use from ``cfg.model`` and ``cfg.llm``."""
        if self._llm is None:
            from trustsim.llm import build_client

            self._llm = build_client(self.cfg.get("model") or {}, self.cfg.get("llm") or {})
        return self._llm

    def llm_stats(self) -> dict[str, Any] | None:
        """Calls, cache hits, tokens and cost of the job's LLM client (None when no client was built)."""
        return self._llm.stats() if self._llm is not None else None

    def close_llm(self) -> None:
        """Close the LLM client if one was built (its connections, the request store)."""
        close = getattr(self._llm, "aclose", None)
        if close is not None:
            with contextlib.suppress(RuntimeError):  # a loop is already running: it closes with the process
                asyncio.run(close())

    def progress(self, total: int, desc: str) -> Any:
        return make_progress(total, desc, self.cfg.get("progress", "auto"))

    def set_cell(self, **keys: Any) -> None:
        self.cell.update(keys)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


class Manifest:
    """manifest.json, rewritten atomically at start and end of the job."""

    def __init__(self, path: Path, cfg: dict[str, Any], ctx: JobContext) -> None:
        self.path = path
        self.started = time.perf_counter()
        self.data: dict[str, Any] = {
            "trustsim_version": __version__,
            "run_id": ctx.run_id,
            "run_dir": str(path.parent),
            "game": cfg["game"].get("type", cfg["game"]["runner"].split(".")[1]),
            "status": "running",
            "failure": None,
            "cell": {},
            "experiment": cfg.get("name"),
            "seed": cfg.get("seed"),
            "runs": cfg.get("runs"),
            "config_hash": ctx.config_hash,
            "world_hash": ctx.world_hash,
            "config": redact(cfg),
            "versions": package_versions(),
            "git": git_revision(),
            "command": [redact_assignments(a) for a in redact(sys.argv)],
            "timings": {"started": _now(), "finished": None, "wall_s": None},
            "counts": {},
            "llm": {
                "calls_sent": 0,
                "cache_hits": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cost_usd": 0.0,
            },
        }

    @property
    def run_id(self) -> str:
        return self.data["run_id"]

    def write(self) -> None:
        write_json_atomic(self.path, self.data)

    def finish(self, ctx: JobContext, status: str, failure: dict[str, Any] | None = None) -> None:
        self.data.update(status=status, failure=failure, cell=ctx.cell, counts=ctx.counts)
        self.data["timings"].update(finished=_now(), wall_s=round(time.perf_counter() - self.started, 3))
        stats = ctx.llm_stats()
        if stats is not None:
            self.data["llm"] = stats
        self.write()


def run_job(cfg: dict[str, Any], run_dir: Path) -> int:
    """Validate, run the game's runner, and leave a manifest whatever happens. Returns an exit code."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    logging.getLogger("MESA").setLevel(logging.WARNING)  # Mesa logs every step at INFO
    scrub_files(sorted((run_dir / ".hydra").glob("*.yaml")))
    try:
        validate_top(cfg)
        runner, validate = load_runner(cfg["game"]["runner"])
        if validate is not None:
            validate(cfg)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        write_json_atomic(
            run_dir / "manifest.json",
            {
                "status": "failed",
                "failure": {"reason": str(exc), "resume": "fix the configuration"},
                "config": redact(cfg),
            },
        )
        return 2
    recorder = RunRecorder(run_dir)
    ctx = JobContext(cfg, run_dir, recorder)
    manifest = Manifest(run_dir / "manifest.json", cfg, ctx)
    manifest.write()
    recorder.event(
        "run_start", run_id=manifest.run_id, config_hash=ctx.config_hash, world_hash=ctx.world_hash
    )
    code = 0
    try:
        runner(ctx)
        recorder.event("run_end", status="complete")
        status, failure = "complete", None
    except KeyboardInterrupt:
        status, failure, code = "failed", {"reason": "interrupted", "resume": RESUME_HINT}, 130
        print(f"trustsim: interrupted; {RESUME_HINT}", file=sys.stderr)
    except ConfigError as exc:
        status, failure, code = "failed", {"reason": str(exc), "resume": "fix the configuration"}, 2
        print(f"trustsim: {exc}", file=sys.stderr)
    except TrustsimError as exc:
        status, failure, code = "failed", {"reason": str(exc), "resume": RESUME_HINT}, 3
        print(f"trustsim: run failed: {exc}\ntrustsim: {RESUME_HINT}", file=sys.stderr)
    finally:
        ctx.close_llm()
    if code:
        recorder.event("run_end", status="failed", reason=failure["reason"] if failure else None)
    recorder.close()
    manifest.finish(ctx, status, failure)
    if code == 0:
        counts = ", ".join(f"{v} {k}" for k, v in ctx.counts.items())
        llm = ctx.llm_stats()
        calls = (
            f"; LLM calls sent {llm.get('calls_sent', 0)}, cache hits {llm.get('cache_hits', 0)}"
            if llm
            else ""
        )
        print(f"trustsim: {manifest.run_id} complete ({counts}{calls}) -> {run_dir}")
    return code
