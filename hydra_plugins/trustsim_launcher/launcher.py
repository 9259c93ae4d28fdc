"""``TrustsimLauncher``: Hydra's side of :mod:`trustsim.launch` (every job of a multirun in one process).

``launch`` composes every job's config first, with Hydra's config loader and the job's overrides, as Hydra's
``run_job`` sets it up (job number, output directory) and resolved. Composition is most of a large sweep's
start-up (about 0.1 s of CPU per job), so from :data:`PARALLEL_FROM` jobs on it runs in forked worker
processes, one per core: each has its own ``HydraConfig`` (a process-wide singleton), set to the job's config
while it is resolved. In this process ``HydraConfig`` keeps the sweep's config. Every job is then validated
(:func:`trustsim.launch.sweep_job`) and its run directory checked (:func:`trustsim.rundir.check_run_dir`); any
invalid job fails the sweep, naming each one and its key, before
anything is written or sent (exit 2). Then the jobs run concurrently (:func:`trustsim.launch.run_jobs`) with
everything they need passed explicitly (run directory, overrides, config).

Each job gets what Hydra's own ``run_job`` gives it: its ``.hydra/`` record (written by the job from its own
redacted config and Hydra node: :mod:`trustsim.hydra_record`), its log file (``<run dir>/<job name>.log``:
the records its own threads and tasks log) and the ``on_job_start`` / ``on_job_end`` callbacks (called one
at a time).
``hydra.job.chdir=true`` cannot work with jobs running at once in one process: refused.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobStatus, configure_log, env_override, setup_globals
from hydra.errors import HydraException
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from trustsim.config import to_container
from trustsim.errors import ConfigError
from trustsim.launch import SweepJob, refuse, run_jobs, sweep_job
from trustsim.rundir import check_run_dir
from trustsim.schema import plain_mapping

log = logging.getLogger(__name__)

PARALLEL_FROM = 16
"""Sweeps of at least this many jobs are composed in worker processes (where ``fork`` exists)."""
SHOW_FROM, SHOW_EVERY_S = 1000, 5.0
"""Sweeps of at least this many jobs say how far composing got, this often (stderr)."""
_JOB_LOG: contextvars.ContextVar[str | None] = contextvars.ContextVar("trustsim_job_log", default=None)
_FORKED: tuple[Any, DictConfig] | None = (
    None  # (config loader, sweep config) that forked workers compose with
)


@dataclass
class Composed:
    """One job's composed config, as plain data (it comes back from a worker process)."""

    number: int
    overrides: list[str]  # hydra.overrides.task
    run_dir: str
    hydra: dict[str, Any]  # the job's hydra node (unresolved)
    job_name: str
    log_file: str | None
    cfg: dict[str, Any] | None = None  # resolved, without hydra; None: see error
    error: tuple[str, str] | None = None  # (key, message) of a configuration error


class TrustsimLauncher(Launcher):
    """Hydra launcher ``trustsim`` (see the module docstring). ``max_jobs``: at most this many jobs that call
    models run at once (None: all)."""

    composes_every_job = True  # the sweeper need not compose the batch first (trustsim_sweeper)

    def __init__(self, max_jobs: int | None = None) -> None:
        self.max_jobs = max_jobs
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None
        self._callbacks_lock = threading.Lock()

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        assert self.config is not None and self.hydra_context is not None
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        log.info(f"Launching {len(job_overrides)} jobs in one process (hydra/launcher=trustsim)")
        numbered = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
        records: list[_Record] = []
        errors: list[tuple[str, ConfigError]] = []
        for composed in self._compose_all(numbered):
            label = f"job {composed.number} [{' '.join(composed.overrides)}]"
            try:
                if composed.error is not None:
                    raise ConfigError(*composed.error)
                assert composed.cfg is not None
                check_run_dir(composed.run_dir)  # no job writes into a folder of foreign files
                records.append(_Record(composed, self))
            except ConfigError as exc:
                errors.append((label, exc))
        if errors:
            refuse(errors)
        files = _JobLogFiles.install(self.config)
        try:
            with env_override(dict(self.config.hydra.job.env_set or {})):
                jobs = [r.job for r in records]
                codes = run_jobs(jobs, max_jobs=self.max_jobs, progress=self.config.get("progress"))
        finally:
            files.remove()
        return [
            r.job_return(code, full=False) for r, code in zip(records, codes, strict=True) if code is not None
        ]

    def _compose_all(self, numbered: list[tuple[int, list[str]]]) -> list[Composed]:
        """Every job composed: in forked workers for a large sweep, else here (HydraConfig restored)."""
        assert self.config is not None and self.hydra_context is not None
        global _FORKED
        workers = min(os.cpu_count() or 1, len(numbered) // (PARALLEL_FROM // 2) or 1)
        if (
            len(numbered) >= PARALLEL_FROM
            and workers > 1
            and "fork" in multiprocessing.get_all_start_methods()
        ):
            _FORKED = (self.hydra_context.config_loader, self.config)
            try:
                context = multiprocessing.get_context("fork")
                with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
                    done = _shown(pool.map(_compose_forked, numbered, chunksize=4), len(numbered))
            finally:
                _FORKED = None
            for item in done:
                if isinstance(item, BaseException):
                    raise item
            return [item for item in done if isinstance(item, Composed)]
        saved = HydraConfig.instance().cfg
        loader = self.hydra_context.config_loader
        try:
            return _shown((compose(loader, self.config, n, o) for n, o in numbered), len(numbered))
        finally:
            HydraConfig.instance().cfg = saved

    def job_callbacks(self, event: str, **kwargs: Any) -> None:
        """Hydra's per-job callbacks, one at a time (jobs run at once)."""
        assert self.hydra_context is not None
        with self._callbacks_lock:
            getattr(self.hydra_context.callbacks, event)(**kwargs)


def _shown(items: Iterator[Any], total: int) -> list[Any]:
    """``items`` as a list; a sweep of :data:`SHOW_FROM` jobs or more says on stderr how far composing got,
    every :data:`SHOW_EVERY_S` seconds (a large sweep is otherwise silent while its jobs are composed)."""
    if total < SHOW_FROM:
        return list(items)
    out: list[Any] = []
    last = time.monotonic()
    print(f"trustsim: composing the configs of {total:,} jobs", file=sys.stderr, flush=True)
    for item in items:
        out.append(item)
        if time.monotonic() - last >= SHOW_EVERY_S:
            last = time.monotonic()
            print(f"trustsim: composed {len(out):,} of {total:,} jobs", file=sys.stderr, flush=True)
    return out


def compose(loader: Any, master: DictConfig, number: int, overrides: list[str]) -> Composed:
    """One job's config, as Hydra's ``run_job`` sets it up (job number, output directory), resolved; a
    configuration error is returned (``Composed.error``), not raised."""
    config = loader.load_sweep_config(master, overrides)
    with open_dict(config):
        config.hydra.job.id = number
        config.hydra.job.num = number
    HydraConfig.instance().set_config(config)
    run_dir = os.path.abspath(Path(str(config.hydra.sweep.dir)) / str(config.hydra.sweep.subdir))
    with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
        config.hydra.runtime.output_dir = run_dir
    HydraConfig.instance().set_config(config)
    task = [str(o) for o in config.hydra.overrides.task]
    composed = Composed(
        number,
        task,
        run_dir,
        plain_mapping(OmegaConf.to_container(config.hydra, resolve=False, enum_to_str=True), "hydra"),
        str(config.hydra.job.name),
        _log_file(config),
    )
    if config.hydra.job.chdir:
        composed.error = (
            "hydra.job.chdir",
            "must be false with hydra/launcher=trustsim (jobs run at once in one process; choose "
            "hydra/launcher=basic to change directory per job)",
        )
        return composed
    try:
        composed.cfg = to_container(OmegaConf.masked_copy(config, [k for k in config if k != "hydra"]))
    except ConfigError as exc:
        composed.error = (exc.key, exc.message)
    return composed


def _compose_forked(item: tuple[int, list[str]]) -> Composed | BaseException:
    """:func:`compose` in a forked worker (the loader and sweep config inherited from the launcher)."""
    assert _FORKED is not None
    try:
        return compose(*_FORKED, *item)
    except HydraException as exc:  # an override Hydra refuses: re-raised by the launcher
        return HydraException(str(exc))


def _log_file(config: DictConfig) -> str | None:
    """The job's log file from ``hydra.job_logging`` (its ``file`` handler; resolved for this job)."""
    found = OmegaConf.select(config, "hydra.job_logging.handlers.file.filename", default=None)
    return str(found) if found else None


class _Record:
    """What Hydra's ``run_job`` gives a job: its Hydra node (for its ``.hydra/`` record), its log file, its
    callbacks."""

    def __init__(self, composed: Composed, launcher: TrustsimLauncher) -> None:
        assert composed.cfg is not None
        self.composed = composed
        self.launcher = launcher
        self._config: DictConfig | None = None
        self.job: SweepJob = sweep_job(
            composed.number, composed.overrides, Path(composed.run_dir), composed.cfg, self.start, self.end
        )
        self.job.hydra = composed.hydra  # the job writes its .hydra/ record from it (trustsim.hydra_record)

    def config(self) -> DictConfig:
        """The job's config with its hydra node (for the callbacks; made once, when first asked for)."""
        if self._config is None:
            cfg = self.composed.cfg
            if cfg is None:  # a job whose composition failed is never run
                raise RuntimeError(f"job {self.composed.number} has no composed config")
            self._config = OmegaConf.create({**cfg, "hydra": self.composed.hydra})
        return self._config

    def start(self) -> None:
        """In the job's thread, before it runs."""
        _JOB_LOG.set(self.composed.log_file)
        if self.launcher.hydra_context is not None and self.launcher.hydra_context.callbacks.callbacks:
            self.launcher.job_callbacks(
                "on_job_start", config=self.config(), task_function=self.launcher.task_function
            )

    def end(self, code: int) -> None:
        """In the job's thread, after it ran."""
        if self.launcher.hydra_context is not None and self.launcher.hydra_context.callbacks.callbacks:
            self.launcher.job_callbacks("on_job_end", config=self.config(), job_return=self.job_return(code))
        _JobLogFiles.close(self.composed.log_file)

    def job_return(self, code: int, *, full: bool = True) -> JobReturn:
        """What Hydra's ``run_job`` returns for the job (its return value: the exit code); ``full``: with its
        configs."""
        ret = JobReturn()
        ret.overrides = list(self.composed.overrides)
        if full:
            config = self.config()
            ret.cfg = OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])
            ret.hydra_cfg = OmegaConf.masked_copy(config, "hydra")
        ret.working_dir = os.getcwd()
        ret.task_name = self.composed.job_name
        ret.status = JobStatus.COMPLETED
        ret.return_value = code
        return ret


class _JobLogFiles(logging.Handler):
    """One root handler that writes each record to the log file of the job that logged it (a context variable
    set in the job's thread, inherited by its tasks). The console handlers are Hydra's (``hydra_logging``)."""

    _files: dict[str, logging.FileHandler] = {}  # noqa: RUF012 - one table per process
    _lock = threading.Lock()

    def __init__(self, fmt: str | None) -> None:
        super().__init__()
        self._format = logging.Formatter(fmt) if fmt else None

    @classmethod
    def install(cls, config: DictConfig) -> _JobLogFiles:
        fmt = OmegaConf.select(config, "hydra.job_logging.formatters.simple.format", default=None)
        level = OmegaConf.select(config, "hydra.job_logging.root.level", default="INFO")
        handler = cls(str(fmt) if fmt else None)
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(level)
        return handler

    def remove(self) -> None:
        logging.getLogger().removeHandler(self)
        with self._lock:
            for handler in self._files.values():
                handler.close()
            self._files.clear()

    def emit(self, record: logging.LogRecord) -> None:
        path = _JOB_LOG.get()
        if path is None:
            return
        with self._lock:
            handler = self._files.get(path)
            if handler is None:
                handler = self._files[path] = logging.FileHandler(path, encoding="utf-8", delay=True)
                if self._format is not None:
                    handler.setFormatter(self._format)
        handler.emit(record)

    @classmethod
    def close(cls, path: str | None) -> None:
        with cls._lock:
            handler = cls._files.pop(path, None) if path else None
        if handler is not None:
            handler.close()
