"""One Hydra job → one run directory: validate, identify, write the manifest, run the game's runner.

:func:`run_job` takes the composed config through four steps, each once and in this order: validate it into
typed objects (:mod:`trustsim.config`), derive the job's identity (hashes, run id, seed tree:
:mod:`trustsim.identity`), write the manifest (:mod:`trustsim.rundir`, secrets redacted from the validated
config), and run the game's runner with a :class:`JobContext` holding the typed objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from trustsim.config import Validated, validate_config
from trustsim.errors import RESUME_HINT, ConfigError, TrustsimError
from trustsim.host import current_host
from trustsim.hydra_record import write_hydra_record
from trustsim.identity import Identity, identify
from trustsim.llm import build_client
from trustsim.llm.config import ModelConfig
from trustsim.llm.seat_model import merge_stats
from trustsim.progress import make_progress
from trustsim.rundir import (
    Manifest,
    RunDirBusy,
    RunDirForeign,
    RunRecorder,
    open_run_dir,
    write_failed_manifest,
)
from trustsim.runtime import Runtime
from trustsim.secrets import protect_run, redact, redact_argument
from trustsim.seeding import stable_hash
from trustsim.versions import git_revision, package_versions
from trustsim.write_failure import (
    EXIT_WRITE,
    WriteFailed,
    quiet_log_files,
    release_space,
    reserve_space,
    write_failure,
)

T = TypeVar("T")


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, also inside a running event loop (Jupyter):
    there it runs on a fresh loop in a worker thread, and this call blocks until it is done."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="trustsim-job-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def print_warnings(warnings: list[str]) -> None:
    """Print a validated config's warnings (settings without effect) on stderr."""
    for message in warnings:
        print(f"trustsim: warning: {message}", file=sys.stderr)


def one_line(exc: BaseException) -> str:
    """The exception's first non-empty line (its type name when it has no message)."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


def failure_of(exc: BaseException, resume: str) -> dict[str, Any]:
    """The manifest's failure block: exception type, a one-line reason, how to resume."""
    return {"type": type(exc).__name__, "reason": one_line(exc), "resume": resume}


class JobContext:
    """What a game's runner gets: the typed options and groups, the agent, the model and call-layer configs,
    the run directory, recorder, seed tree, LLM clients, progress and counters (see :mod:`trustsim.contract`).
    ``cfg`` is the recorded config (plain; what the manifest holds and the config hash covers)."""

    def __init__(
        self,
        valid: Validated,
        identity: Identity,
        run_dir: Path,
        recorder: RunRecorder,
        runtime: Runtime | None = None,
    ) -> None:
        self.cfg = valid.cfg
        self.game = valid.game
        self.options = valid.options
        self.groups = valid.groups
        self.agent = valid.agent
        self.agent_params = valid.agent_params
        self.model = valid.model
        self.llm_config = valid.llm
        self.runs = valid.root.runs
        self.uses_llm = valid.uses_llm
        self.run_dir = run_dir
        self.recorder = recorder
        self.config_hash = identity.config_hash
        self.world_hash = identity.world_hash
        self.run_id = identity.run_id
        self.seeds = identity.seeds()
        self._progress = valid.root.progress
        self._runtime = runtime  # a launcher running many jobs: where the async part runs (trustsim.runtime)
        self.cell: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self._llm: Any = None
        self._seat_llms: dict[str, Any] = {}  # model config hash -> client of a seat's own model (llm_for)

    def _build_llm(self, model: ModelConfig) -> Any:
        """A client for one model config with the job's ``llm`` settings (the job's and every seat's; a seat's
        client shares the job client's request store: one writer per store shard)."""
        shared = getattr(self._llm, "store", None)
        return build_client(model, self.llm_config, job=self.config_hash, store=shared)

    @property
    def llm(self) -> Any:
        """The job's LLM client, built on first use from the ``model`` and ``llm`` configs."""
        if self._llm is None:
            if self.model is None:
                raise ConfigError("model", "no agent of this job calls a model, so it has no LLM client")
            self._llm = self._build_llm(self.model)
        return self._llm

    def llm_for(self, model: ModelConfig | None) -> Any:
        """The client of a seat's, player's or role's own model config (its model, api_base, key variable,
        hence its own request-store keys); None or the job's model: :attr:`llm`. One client per distinct
        config (mixed teams, ``trustsim.llm.seat_model``)."""
        main = self.llm  # built first: seat clients share its request store
        if model is not None and not isinstance(model, ModelConfig):
            raise TypeError(
                f"llm_for takes a ModelConfig (trustsim.llm.seat_model.resolve_model), got {model!r}"
            )
        config = model
        if config is None or config == self.model:
            return main
        key = stable_hash(dataclasses.asdict(config))
        if key not in self._seat_llms:
            self._seat_llms[key] = self._build_llm(config)
        return self._seat_llms[key]

    def llm_stats(self) -> dict[str, Any] | None:
        """Calls, cache hits, tokens and cost of the job's LLM clients (None when no client was built)."""
        return merge_stats(self._llm, list(self._seat_llms.values()))

    def close_llm(self) -> None:
        """Close the LLM clients that were built (their connections, the request store)."""
        for client in self._seat_llms.values():
            if getattr(client, "store", None) is getattr(self._llm, "store", None):
                client.store = None  # shared: the job's client closes it
        for client in (*self._seat_llms.values(), self._llm):
            close = getattr(client, "aclose", None)
            if close is not None:
                with contextlib.suppress(RuntimeError):
                    run_coroutine(close())

    def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run the job's async part: ``asyncio.run`` semantics, also inside a running event loop; in a sweep
        of ``hydra/launcher=trustsim``, on the sweep's loop (:mod:`trustsim.runtime`)."""
        if self._runtime is not None:
            return self._runtime.run(coro)
        return run_coroutine(coro)

    def progress(self, total: int, desc: str) -> Any:
        """A progress reporter for ``total`` units (in a ``hydra/launcher=trustsim`` sweep: the sweep's)."""
        if self._runtime is not None:
            return self._runtime.progress(total, desc)
        return make_progress(total, desc, self._progress)

    def set_cell(self, **keys: Any) -> None:
        self.cell.update(keys)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


def job_manifest(run_dir: Path, valid: Validated, identity: Identity) -> Manifest:
    """The job's manifest (``status: running``), with provenance and secrets redacted from the validated
    config (see :class:`trustsim.rundir.Manifest`). Before it, the model's key variables are registered as
    secrets and every log handler redacts them (the job wrote its .hydra/ record, redacted, at start)."""
    cfg = valid.cfg
    protect_run(cfg)
    unit = valid.game.unit
    return Manifest(
        run_dir,
        run_id=identity.run_id,
        game=valid.game.name,
        unit=unit.record(valid) if unit is not None else None,  # reader and status need no game registry
        experiment=cfg.get("name"),
        seed=cfg.get("seed"),
        runs=cfg.get("runs"),
        config_hash=identity.config_hash,
        world_hash=identity.world_hash,
        config=redact(cfg),
        versions=package_versions(),
        git=git_revision(),
        command=[redact_argument(a) for a in sys.argv],
        warnings=list(valid.warnings),
    )


def _fail_early(run_dir: Path, cfg: dict[str, Any], exc: BaseException, resume: str) -> None:
    write_failed_manifest(run_dir, exc, resume, config=redact(cfg))


def run_job(
    cfg: dict[str, Any],
    run_dir: Path,
    overrides: list[str] | None = None,
    *,
    valid: Validated | None = None,
    runtime: Runtime | None = None,
) -> int:
    """Validate, run the game's runner, and leave a manifest whatever happens. Returns an exit code:
    0 complete, 2 configuration error or a run directory it must not write into (the working directory, ``/``,
    a folder of foreign files: nothing written), 3 run failure (resumable; a write that failed too), 1 unexpected error,
    5 run directory in use by another job (nothing written), 130 interrupted. (A preview, ``preview=true``, is
    no job: :func:`trustsim.api.run_config` sends it to :mod:`trustsim.preview`.) Everything is per job: a
    failure ends this job's run only.

    ``valid``: ``cfg`` already validated (a launcher validates every job of a sweep before any runs);
    ``runtime``: how such a launcher runs the job (:mod:`trustsim.runtime`: its async part, its Hydra
    record)."""
    run_dir = Path(run_dir)
    try:
        lock, notes = open_run_dir(run_dir)
    except RunDirBusy as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        return exc.exit_code
    except RunDirForeign as exc:  # nothing written there
        print(f"trustsim: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the run directory cannot be written at all
        return _failed_before_start(run_dir, cfg, exc)
    try:
        for note in notes:
            print(f"trustsim: note: {note}", file=sys.stderr)
        return _run_locked(cfg, run_dir, notes, overrides, valid, runtime)
    except OSError as exc:  # a write before the game started: .hydra/, the manifest, the event log
        return _failed_before_start(run_dir, cfg, exc)
    finally:
        lock.release()


def _report(failed: WriteFailed) -> dict[str, Any]:
    """Print a failed write (one line, and what to do) and return its manifest failure block."""
    print(f"trustsim: run failed: {failed}\ntrustsim: {failed.resume}", file=sys.stderr)
    return failure_of(failed, failed.resume)


def _failed_before_start(run_dir: Path, cfg: dict[str, Any], exc: OSError) -> int:
    """A write failed before the game started: say so, and leave a failed manifest if it can be written."""
    failed = write_failure(exc, run_dir)
    if failed is None:
        raise exc
    _report(failed)
    try:
        _fail_early(run_dir, cfg, failed, failed.resume)
    except OSError as again:
        print(f"trustsim: the manifest could not be written either ({one_line(again)})", file=sys.stderr)
    return failed.exit_code


def _run_locked(
    cfg: dict[str, Any],
    run_dir: Path,
    notes: list[str],
    overrides: list[str] | None,
    valid: Validated | None,
    runtime: Runtime | None,
) -> int:
    """:func:`run_job` while holding the run directory's lock."""
    logging.getLogger("MESA").setLevel(logging.WARNING)  # Mesa logs every step at INFO
    protect_run(cfg)  # the model's key variables are secrets wherever they would be written (logs too)
    quiet_log_files()  # a job log on a full disk says so once, not a traceback per record
    write_hydra_record(run_dir, cfg, runtime.hydra if runtime is not None else None)  # .hydra/, redacted
    try:
        valid = valid if valid is not None else validate_config(cfg, overrides)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        _fail_early(run_dir, cfg, exc, "fix the configuration")
        return 2
    print_warnings(valid.warnings)
    identity = identify(valid)
    manifest = job_manifest(run_dir, valid, identity)
    for note in notes:
        manifest.note(note)
    manifest.write()
    recorder = RunRecorder(run_dir, valid.game.unit.events if valid.game.unit is not None else None)
    ctx = JobContext(valid, identity, run_dir, recorder, runtime)
    reserve = reserve_space(run_dir)  # freed before the last manifest write: room to say why on a full disk
    recorder.event(
        "run_start", run_id=identity.run_id, config_hash=identity.config_hash, world_hash=identity.world_hash
    )
    code = 0
    failure: dict[str, Any] | None = None
    try:
        valid.game.run(ctx)
        recorder.event("run_end", status="complete")
        status = "complete"
    except KeyboardInterrupt as exc:
        status, failure, code = "failed", failure_of(exc, RESUME_HINT), 130
        failure["reason"] = "interrupted"
        print(f"trustsim: interrupted; {RESUME_HINT}", file=sys.stderr)
    except ConfigError as exc:  # errors may carry their own advice and exit code (trustsim/llm/errors.py)
        resume = getattr(exc, "resume", "fix the configuration")
        status, failure, code = "failed", failure_of(exc, resume), getattr(exc, "exit_code", 2)
        print(
            f"trustsim: {exc}" + (f"\ntrustsim: {resume}" if hasattr(exc, "resume") else ""), file=sys.stderr
        )
    except TrustsimError as exc:
        resume = getattr(exc, "resume", RESUME_HINT)
        status, failure, code = "failed", failure_of(exc, resume), getattr(exc, "exit_code", 3)
        print(f"trustsim: run failed: {exc}\ntrustsim: {resume}", file=sys.stderr)
    except Exception as exc:  # a bug or an unexpected condition: still a failed manifest saying why
        if (failed := write_failure(exc, run_dir)) is not None:  # a full disk, an I/O error, permission lost
            status, failure, code = "failed", _report(failed), failed.exit_code
        else:
            status, failure, code = "failed", failure_of(exc, RESUME_HINT), 1
            logging.getLogger("trustsim").debug("run failed", exc_info=True)
            print(
                f"trustsim: run failed with {type(exc).__name__}: {failure['reason']}\ntrustsim: {RESUME_HINT}",
                file=sys.stderr,
            )
    finally:
        with contextlib.suppress(Exception):
            ctx.close_llm()
    try:
        if code:
            recorder.event("run_end", status="failed", reason=failure["reason"] if failure else None)
        recorder.close()
    except OSError as exc:  # the last events and rows could not be written either
        failed = write_failure(exc, run_dir)
        if failed is None:
            raise
        if code == 0:
            status, failure, code = "failed", _report(failed), failed.exit_code
    release_space(reserve)
    try:
        manifest.finish(
            status,
            failure,
            cell=ctx.cell,
            counts=ctx.counts,
            llm=ctx.llm_stats(),
            tables=recorder.table_rows(),
        )
    except OSError as exc:
        print(f"trustsim: the manifest could not be updated either ({one_line(exc)})", file=sys.stderr)
        return code or EXIT_WRITE
    if code == 0:
        counts = ", ".join(f"{v} {k}" for k, v in ctx.counts.items())
        llm = ctx.llm_stats()
        calls = (
            f"; LLM calls sent {llm.get('calls_sent', 0)}, cache hits {llm.get('cache_hits', 0)}"
            if llm
            else ""
        )
        # a harness's job (Inspect) runs in a scratch folder the harness deletes: no path to point at
        where = "" if current_host() is not None else f" -> {run_dir}"
        print(f"trustsim: {manifest.run_id} complete ({counts}{calls}){where}")
    return code
