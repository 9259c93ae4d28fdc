"""The solver: play one sample's trustsim job with Inspect's models, keep its run directory in the sample.

The job runs as any trustsim job does (:func:`trustsim.job.run_job`: validation, manifest, the game's runner,
tables), on a worker thread, in a scratch directory that is removed afterwards; its host
(:mod:`trustsim.host`) is the sample's :class:`~trustsim_inspect.bridge.InspectBridge`. Its request store is
a fresh one in the scratch directory, so every call of the job reaches Inspect (and Inspect's log); caching
across runs is Inspect's (``--cache``). The run directory's files (manifest, events, tables) are kept in the
sample's store under :data:`~analysis.inspect_logs.RUN_FILES_KEY`: the scorer reads them, and
``python -m analysis from-inspect`` writes them back out as a run directory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import ModelOutput, get_model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver

from analysis.inspect_logs import RUN_FILE_SUFFIXES, RUN_FILES_KEY
from trustsim.host import Host, hosting
from trustsim.job import run_job
from trustsim_inspect.bridge import InspectBridge
from trustsim_inspect.samples import SampleJob


class TrustsimJobError(RuntimeError):
    """A sample's trustsim job failed (the message carries the manifest's reason and how to resume)."""


def bound_roles() -> dict[str, str]:
    """The model roles bound for this eval (role → model name; a role bound to a list plays its first)."""
    out = {}
    for role, models in model_roles().items():
        out[role] = str(models[0] if isinstance(models, list) else models)
    return out


def run_files(run_dir: Path) -> dict[str, str]:
    """The text of a run directory's manifest, events and tables, by file name."""
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(run_dir.iterdir())
        if p.is_file() and p.suffix in RUN_FILE_SUFFIXES
    }


def play_job(cfg: dict[str, Any], overrides: list[str], bridge: InspectBridge) -> tuple[int, dict[str, str]]:
    """Run one job in a scratch directory under ``bridge`` (call on a worker thread); its exit code and files."""
    scratch = Path(tempfile.mkdtemp(prefix="trustsim-inspect-"))
    try:
        llm = cfg.setdefault("llm", {})
        llm.update(store_path=str(scratch / "requests.sqlite"), store_dir=None, replay_only=False)
        run_dir = scratch / "run"
        with hosting(Host(transport=bridge.transport, on_event=bridge.on_event)):
            code = run_job(cfg, run_dir, overrides)
        return code, run_files(run_dir) if run_dir.is_dir() else {}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _failure(files: Mapping[str, str]) -> str:
    try:
        manifest = json.loads(files.get("manifest.json", "{}"))
    except ValueError:
        return "no readable manifest"
    failure = manifest.get("failure") or {}
    reason = failure.get("reason") or "no reason recorded"
    return f"{reason} ({failure.get('type', 'error')})"


def summary(files: Mapping[str, str], family: str) -> str:
    """One line on what the job played (its counts), for the sample's output."""
    manifest = json.loads(files.get("manifest.json", "{}") or "{}")
    counts = ", ".join(f"{v} {k}" for k, v in (manifest.get("counts") or {}).items())
    llm = manifest.get("llm") or {}
    return (
        f"trustsim {family} job {manifest.get('run_id', '?')}: {manifest.get('status', '?')}"
        + (f" ({counts})" if counts else "")
        + f"; model calls {llm.get('calls_sent', 0)}"
    )


@solver
def play(jobs: Mapping[str, SampleJob]) -> Solver:
    """Play each sample's trustsim job (``jobs``: sample id → job) with the eval's model and roles."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        job = jobs[str(state.sample_id)].for_epoch(state.epoch)
        cfg = job.with_models(str(get_model()), bound_roles())
        bridge = InspectBridge()
        worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="trustsim-job")
        played = worker.submit(play_job, cfg, list(job.overrides), bridge)
        worker.shutdown(wait=False)
        try:
            code, files = await asyncio.wrap_future(played)
        except anyio.get_cancelled_exc_class():  # a time limit, an interrupt
            bridge.close()  # the job's calls fail: it ends with a failed manifest, kept in the sample
            with anyio.CancelScope(shield=True):
                if not played.cancelled():
                    _, files = await asyncio.wrap_future(played)
                    state.store.set(RUN_FILES_KEY, files)
            raise
        state.store.set(RUN_FILES_KEY, files)
        if code != 0:
            if bridge.failure is not None:
                raise bridge.failure  # Inspect's own: a limit, a provider error after Inspect's retries
            raise TrustsimJobError(f"the trustsim job failed (exit {code}): {_failure(files)}")
        state.output = ModelOutput.from_content(model=str(get_model()), content=summary(files, job.family))
        state.completed = True
        return state

    return solve
