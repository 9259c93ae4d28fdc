"""Run every job of a sweep in one process, all in flight at once (``hydra/launcher=trustsim``).

The Hydra plugin (``hydra_plugins/trustsim_launcher``) composes each job's config and hands the jobs here:

1. :func:`sweep_job` validates a job (the one validator, :func:`trustsim.config.validate_config`, and the
   key variables its model names). The plugin validates every job first: one that is invalid fails the whole
   sweep before anything runs (:func:`refuse`: exit 2, naming each job and key).
2. :func:`run_jobs` runs them. Each job runs in a worker thread with its own run directory, lock, manifest,
   tables and exit code, as :func:`trustsim.job.run_job` runs it alone; a failing job does not stop the
   others. The async part of every job that calls a model runs on ONE event loop (this thread's), so their
   requests meet each endpoint's shared limits (:mod:`trustsim.llm.endpoint`): all such jobs run at once (up
   to ``max_jobs``). Jobs that call no model (scripted agents, previews) are CPU-bound: they run one at a
   time, each on a private loop in its own thread (:mod:`trustsim.runtime`), so they never hold up the
   loop's requests and do not contend with each other for the interpreter.
3. The sweep's progress (:mod:`trustsim.sweep_progress`) replaces the jobs' own progress lines; each job still
   prints its one-line summary. Ctrl-C interrupts every running job (each leaves an ``interrupted``
   manifest, as a single run does) and starts no other.

Jobs on the embedded model share one llama.cpp provider per process: jobs with different ``model.local``
settings take turns (the model answers one request at a time anyway).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import logging
import resource
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustsim.api import run_config
from trustsim.config import Validated, validate_config
from trustsim.errors import RESUME_HINT, ConfigError
from trustsim.llm.client import check_key_env
from trustsim.llm.endpoint import endpoints
from trustsim.runtime import Interrupt, Runtime
from trustsim.seeding import stable_hash
from trustsim.summary import print_summary
from trustsim.sweep_progress import SweepProgress

log = logging.getLogger(__name__)

FILES_PER_JOB = 24
"""Open files a running job may hold (store connection and WAL, event log, tables, lock, log, sockets)."""
RESERVED_FILES = 128
"""Open files kept free for everything else (Python, litellm's connection pools, Hydra)."""
TICK_S = 1.0


@dataclass
class SweepJob:
    """One validated job of a sweep.

    Attributes:
        number: Hydra's job number (``hydra.job.num``).
        overrides: The job's command-line overrides (``hydra.overrides.task``).
        run_dir: Its run directory.
        cfg: Its composed, resolved config (plain containers).
        valid: ``cfg`` validated.
        before: Called in the job's thread before it runs (the plugin's ``on_job_start`` callbacks).
        after: Called in the job's thread with its exit code once it ran.
        hydra: The job's own Hydra node, from which it writes its ``.hydra/`` record (None: no record).
    """

    number: int
    overrides: list[str]
    run_dir: Path
    cfg: dict[str, Any]
    valid: Validated
    before: Callable[[], None] | None = None
    after: Callable[[int], None] | None = None
    hydra: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"job {self.number} [{' '.join(self.overrides)}]"

    @property
    def calls_models(self) -> bool:
        """Whether the job sends requests (a preview sends none)."""
        return self.valid.uses_llm and self.cfg.get("preview") is not True

    @property
    def local_settings(self) -> str | None:
        """A digest of ``model.local`` when the job plays on the embedded model (None otherwise)."""
        model = self.valid.model
        if model is None or model.provider != "local" or not self.calls_models:
            return None
        return stable_hash(dataclasses.asdict(model.local))


def sweep_job(
    number: int,
    overrides: Sequence[str],
    run_dir: Path,
    cfg: dict[str, Any],
    before: Callable[[], None] | None = None,
    after: Callable[[int], None] | None = None,
) -> SweepJob:
    """Validate one job of a sweep.

    Raises:
        ConfigError: the config is invalid or the model's key variable is not set (the message names the key).
    """
    valid = validate_config(cfg, list(overrides))
    if valid.model is not None and cfg.get("preview") is not True:
        check_key_env(valid.model)  # before anything runs, not at the job's first request
    return SweepJob(number, list(overrides), Path(run_dir), cfg, valid, before, after)


def refuse(errors: Sequence[tuple[str, ConfigError]]) -> None:
    """Print every invalid job (its number, overrides and key) and exit 2: nothing ran, nothing was sent."""
    for label, exc in errors:
        print(f"trustsim: {label}: {exc}", file=sys.stderr)
    print(
        f"trustsim: {len(errors)} job(s) of the sweep have configuration errors; nothing was run "
        "(fix them and re-run the command)",
        file=sys.stderr,
    )
    sys.exit(2)


def run_jobs(
    jobs: Sequence[SweepJob], *, max_jobs: int | None = None, progress: Any = "auto"
) -> list[int | None]:
    """Run the jobs (see the module docstring) and return their exit codes, in order (None: a job that never
    started because the sweep was interrupted). ``max_jobs``: at most this many jobs that call models run at
    once (None: all of them, within the process's open-file limit)."""
    return asyncio.run(_run_all(list(jobs), _job_slots(len(jobs), max_jobs), progress))


def _job_slots(jobs: int, max_jobs: int | None) -> int:
    """How many jobs may run at once: ``max_jobs`` (default all), within the open-file limit, which is raised
    to its hard limit when the jobs need more."""
    wanted = max(1, min(jobs, max_jobs or jobs))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = RESERVED_FILES + FILES_PER_JOB * wanted
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft == resource.RLIM_INFINITY:
        return wanted
    slots = max(1, min(wanted, (soft - RESERVED_FILES) // FILES_PER_JOB))
    if slots < wanted:
        print(
            f"trustsim: note: {slots} jobs run at once, not {wanted} (open-file limit {soft}; raise it with "
            "`ulimit -n`)",
            file=sys.stderr,
        )
    return slots


class _LocalTurns:
    """Jobs on the embedded model with different ``model.local`` settings take turns."""

    def __init__(self) -> None:
        self._settings: str | None = None
        self._users = 0
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def turn(self, settings: str | None) -> AsyncIterator[None]:
        if settings is None:
            yield
            return
        async with self._changed:
            await self._changed.wait_for(lambda: self._users == 0 or self._settings == settings)
            self._settings = settings
            self._users += 1
        try:
            yield
        finally:
            async with self._changed:
                self._users -= 1
                self._changed.notify_all()


def _requests(loop: asyncio.AbstractEventLoop) -> tuple[int, int]:
    """Requests sent and 429s received so far over the loop's endpoints."""
    known = endpoints(loop)
    return sum(e.counts.sent for e in known), sum(e.counts.rate_limited for e in known)


def _run_one(job: SweepJob, runtime: Runtime) -> int:
    """One job, in its worker thread: Hydra's record, the run, its summary line."""
    if job.before is not None:
        job.before()
    code = run_config(job.cfg, job.run_dir, job.overrides, valid=job.valid, runtime=runtime)
    if code == 0:
        print_summary(job.run_dir, single=False)
    if job.after is not None:
        job.after(code)
    return code


async def _tick(progress: SweepProgress) -> None:
    while True:
        await asyncio.sleep(TICK_S)
        progress.tick()


async def _run_all(jobs: list[SweepJob], slots: int, setting: Any) -> list[int | None]:
    loop = asyncio.get_running_loop()
    interrupt = Interrupt()
    progress = SweepProgress(len(jobs), setting, requests=lambda: _requests(loop))
    online, offline = asyncio.Semaphore(slots), asyncio.Semaphore(1)
    local = _LocalTurns()
    threads: dict[int, concurrent.futures.Future[int]] = {}
    units: dict[int, Any] = {}
    codes: list[int | None] = [None] * len(jobs)
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=slots + 1, thread_name_prefix="trustsim-job")

    def finished(i: int, code: int) -> None:
        codes[i] = code
        progress.job_finished(units[i], code)

    async def one(i: int, job: SweepJob) -> None:
        lane = online if job.calls_models else offline
        async with local.turn(job.local_settings), lane:
            units[i] = progress.job_units()
            runtime = Runtime(
                loop if job.calls_models else None,
                interrupt,
                lambda total, _: units[i].start(total),
                job.hydra,
            )
            # a harness's context variables reach the job (trustsim.host)
            context = contextvars.copy_context()
            threads[i] = executor.submit(context.run, _run_one, job, runtime)
            finished(i, await _code(job, threads[i]))

    ticker = loop.create_task(_tick(progress))
    try:
        with progress.above():
            try:
                await asyncio.gather(*(one(i, job) for i, job in enumerate(jobs)))
            except asyncio.CancelledError:  # Ctrl-C: every running job stops and says so; no other starts
                interrupt.set()
                task = asyncio.current_task()
                if task is not None:  # always: this coroutine runs as a task
                    task.uncancel()
                for i, thread in threads.items():
                    if codes[i] is None:
                        finished(i, await _code(jobs[i], thread))
                print(f"trustsim: sweep interrupted; {RESUME_HINT}", file=sys.stderr)
    finally:
        ticker.cancel()
        progress.close()
        executor.shutdown(wait=True)
    return codes


async def _code(job: SweepJob, thread: concurrent.futures.Future[int]) -> int:
    """The job's exit code (1 with a message if it raised: a bug outside the job's own handling)."""
    try:
        return await asyncio.shield(asyncio.wrap_future(thread))
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        log.debug("job failed", exc_info=True)
        print(f"trustsim: {job.label} failed with {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
