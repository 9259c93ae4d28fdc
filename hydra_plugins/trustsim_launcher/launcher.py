"""``TrustsimLauncher``: Hydra's side of :mod:`trustsim.launch` (every job of a multirun in one process).

``launch`` composes every job's config first, with Hydra's config loader and the job's overrides, one after
another (Hydra's ``HydraConfig`` is a process-wide singleton: it is set to each job's config only while that
job is composed and resolved). Every job is validated; any invalid job fails the sweep, naming each one and
its key, before anything is written or sent (exit 2). Then the jobs run concurrently
(:func:`trustsim.launch.run_jobs`) with everything they need passed explicitly (run directory, overrides,
config): while they run, ``HydraConfig`` holds the sweep's config, as it does under any launcher between
jobs. Each job gets what Hydra's own ``run_job`` gives it: its ``.hydra/`` record (``config.yaml``,
``hydra.yaml``, ``overrides.yaml``), its log file (``<run dir>/<job name>.log``: the records its own
threads and tasks log) and the ``on_job_start`` / ``on_job_end`` callbacks (called one at a time).
``hydra.job.chdir=true`` cannot work with jobs running at once in one process: refused.
"""

from __future__ import annotations

import contextvars
import copy
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobStatus, configure_log, env_override, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from trustsim.config import to_container
from trustsim.errors import ConfigError
from trustsim.launch import SweepJob, refuse, run_jobs, sweep_job

log = logging.getLogger(__name__)

_JOB_LOG: contextvars.ContextVar[str | None] = contextvars.ContextVar("trustsim_job_log", default=None)


class TrustsimLauncher(Launcher):
    """Hydra launcher ``trustsim`` (see the module docstring). ``max_jobs``: at most this many jobs that call
    models run at once (None: all)."""

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
        composed: list[tuple[SweepJob, _Record]] = []
        errors: list[tuple[str, ConfigError]] = []
        saved = HydraConfig.instance().cfg
        try:
            for offset, overrides in enumerate(job_overrides):
                number = initial_job_idx + offset
                try:
                    composed.append(self._compose(number, list(overrides)))
                except ConfigError as exc:
                    errors.append((f"job {number} [{' '.join(overrides)}]", exc))
        finally:
            HydraConfig.instance().cfg = saved
        if errors:
            refuse(errors)
        files = _JobLogFiles.install(self.config)
        try:
            with env_override(dict(self.config.hydra.job.env_set or {})):
                codes = run_jobs(
                    [job for job, _ in composed], max_jobs=self.max_jobs, progress=self.config.get("progress")
                )
        finally:
            files.remove()
        return [
            _job_return(record, code)
            for (_, record), code in zip(composed, codes, strict=True)
            if code is not None
        ]

    def _compose(self, number: int, overrides: list[str]) -> tuple[SweepJob, _Record]:
        """One job's config, resolved and validated (ConfigError names the key), as Hydra's ``run_job`` sets it
        up (job number, output directory)."""
        assert self.config is not None and self.hydra_context is not None
        config = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
        with open_dict(config):
            config.hydra.job.id = number
            config.hydra.job.num = number
        HydraConfig.instance().set_config(config)
        if config.hydra.job.chdir:
            raise ConfigError(
                "hydra.job.chdir",
                "must be false with hydra/launcher=trustsim (jobs run at once in one process; choose "
                "hydra/launcher=basic to change directory per job)",
            )
        run_dir = Path(str(config.hydra.sweep.dir)) / str(config.hydra.sweep.subdir)
        with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
            config.hydra.runtime.output_dir = os.path.abspath(run_dir)
        HydraConfig.instance().set_config(config)
        task_cfg = copy.deepcopy(config)
        with read_write(task_cfg), open_dict(task_cfg):
            del task_cfg["hydra"]
        plain = to_container(task_cfg)
        hydra_cfg = copy.deepcopy(HydraConfig.instance().cfg)
        task_overrides = [str(o) for o in config.hydra.overrides.task]
        record = _Record(run_dir, config, task_cfg, hydra_cfg, _log_file(config), self)
        return sweep_job(number, task_overrides, run_dir, plain, record.start, record.end), record

    def job_callbacks(self, event: str, **kwargs: Any) -> None:
        """Hydra's per-job callbacks, one at a time (jobs run at once)."""
        assert self.hydra_context is not None
        with self._callbacks_lock:
            getattr(self.hydra_context.callbacks, event)(**kwargs)


class _Record:
    """What Hydra's ``run_job`` gives a job: its ``.hydra/`` files, its log file, its callbacks."""

    def __init__(
        self,
        run_dir: Path,
        config: DictConfig,
        task_cfg: DictConfig,
        hydra_cfg: DictConfig,
        log_file: str | None,
        launcher: TrustsimLauncher,
    ) -> None:
        self.run_dir = run_dir
        self.config = config
        self.task_cfg = task_cfg
        self.hydra_cfg = hydra_cfg
        self.log_file = log_file
        self.launcher = launcher

    def start(self) -> None:
        """In the job's thread, before it runs."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        subdir = self.config.hydra.output_subdir
        if subdir is not None:
            folder = self.run_dir / str(subdir)
            folder.mkdir(parents=True, exist_ok=True)
            for name, node in (
                ("config.yaml", self.task_cfg),
                ("hydra.yaml", self.hydra_cfg),
                ("overrides.yaml", self.config.hydra.overrides.task),
            ):
                (folder / name).write_text(OmegaConf.to_yaml(node), encoding="utf-8")
        _JOB_LOG.set(self.log_file)
        self.launcher.job_callbacks(
            "on_job_start", config=self.config, task_function=self.launcher.task_function
        )

    def end(self, code: int) -> None:
        """In the job's thread, after it ran."""
        self.launcher.job_callbacks("on_job_end", config=self.config, job_return=_job_return(self, code))
        _JobLogFiles.close(self.log_file)


def _log_file(config: DictConfig) -> str | None:
    """The job's log file from ``hydra.job_logging`` (its ``file`` handler; resolved for this job)."""
    found = OmegaConf.select(config, "hydra.job_logging.handlers.file.filename", default=None)
    return str(found) if found else None


def _job_return(record: _Record, code: int) -> JobReturn:
    """What Hydra's ``run_job`` returns for a job (its return value: the exit code)."""
    ret = JobReturn()
    ret.overrides = [str(o) for o in record.config.hydra.overrides.task]
    ret.cfg = record.task_cfg
    ret.hydra_cfg = record.hydra_cfg
    ret.working_dir = os.getcwd()
    ret.task_name = str(record.config.hydra.job.name)
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
