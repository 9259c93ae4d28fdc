"""The Python API: compose a configuration, run a job, load a run directory.

Works from plain Python and from inside a running asyncio event loop (Jupyter): a job's async part then
runs on its own loop in a worker thread, and :func:`run` blocks until the job is done::

    from trustsim import api

    result = api.run("mid2strike", ["agent=bayes", "runs=2"], run_dir="outputs/api/mid2strike")
    result.status                      # 'complete'
    result.table("games").head()       # a pandas DataFrame
    again = api.load(result.run_dir)   # the same, from disk
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trustsim.config import Validated, conf_dir, label_problem, to_container
from trustsim.errors import ConfigError
from trustsim.job import _fail_early, run_job
from trustsim.preview import run_preview
from trustsim.rundir import EVENTS, MANIFEST, read_events, read_manifest
from trustsim.runtime import Runtime

__all__ = ["RunResult", "compose", "load", "run", "run_config"]


def _overrides(experiment: str | None, overrides: Sequence[str]) -> list[str]:
    if isinstance(overrides, str):
        raise TypeError("overrides must be a sequence of strings, e.g. ['agent=bayes'], not one string")
    return ([f"+experiment={experiment}"] if experiment else []) + list(overrides)


def compose(experiment: str | None = None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The composed, resolved configuration (plain dicts) of ``+experiment=<experiment> <overrides>``.

    Raises:
        ConfigError: a value cannot be resolved (e.g. ``schedule.pattern is required``).
        hydra.errors.HydraException: an unknown preset or group option (named in the message).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    saved = GlobalHydra.instance().hydra if GlobalHydra.instance().is_initialized() else None
    if saved is not None:  # inside a @hydra.main job: compose with a fresh instance, then restore
        GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = hydra_compose("config", overrides=_overrides(experiment, overrides))
        return to_container(cfg)
    finally:
        if saved is not None:
            GlobalHydra.instance().initialize(saved)


@dataclass
class RunResult:
    """A run directory and what it holds."""

    run_dir: Path
    status: str  # running | complete | failed | missing
    manifest: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None  # set by run(); None for load()

    @property
    def failure(self) -> dict[str, Any] | None:
        """The manifest's failure block (type, reason, resume) of a failed run."""
        return self.manifest.get("failure")

    @property
    def tables(self) -> list[str]:
        """Names of the tables in the run directory (``decisions``, ``games``, ...)."""
        return sorted(p.stem for p in self.run_dir.glob("*.csv"))

    def table(self, name: str) -> Any:
        """One table as a pandas DataFrame (``games`` reads ``games.csv``)."""
        import pandas as pd

        path = self.run_dir / f"{name}.csv"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no table {name!r} (available: {', '.join(self.tables) or 'none'})"
            )
        return pd.read_csv(path)

    def events(self) -> list[dict[str, Any]]:
        """Every readable event of ``events.jsonl``, in order (a damaged line is skipped with a warning that
        names it: the reader of :mod:`trustsim.rundir`)."""
        if not (self.run_dir / EVENTS).is_file():
            return []
        return read_events(self.run_dir)


def load(run_dir: str | os.PathLike[str]) -> RunResult:
    """Read a run directory written by the CLI or :func:`run`."""
    path = Path(run_dir)
    if not (path / MANIFEST).is_file():
        return RunResult(path, "missing", {})
    manifest = read_manifest(path)  # a damaged manifest raises RunDirError (a ValueError) naming the file
    return RunResult(path, str(manifest.get("status", "unknown")), manifest)


def default_run_dir(name: str) -> Path:
    """``outputs/runs/<date>/<time>_<name>`` under the working directory, as the CLI names it."""
    now = datetime.now()
    return Path("outputs") / "runs" / now.strftime("%Y-%m-%d") / f"{now.strftime('%H-%M-%S-%f')}_{name}"


def run(
    experiment: str | None = None,
    overrides: Sequence[str] = (),
    run_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run one job (as ``python -m trustsim +experiment=<experiment> <overrides>``) into ``run_dir``.

    A failed job does not raise: the result's ``status`` is ``failed`` and ``failure`` says why (a
    configuration error has ``exit_code`` 2). Safe to call inside a running event loop.
    """
    try:
        cfg = compose(experiment, overrides)
    except ConfigError as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        target = Path(run_dir) if run_dir is not None else default_run_dir(experiment or "default")
        target.mkdir(parents=True, exist_ok=True)
        _fail_early(target, {}, exc, "fix the configuration")
        result = load(target)
        result.exit_code = 2
        return result
    name = cfg.get("name") or "default"
    if label_problem(name) is not None:  # a path, not a label: the job refuses it, from the default folder
        name = experiment or "default"
    target = Path(run_dir) if run_dir is not None else default_run_dir(str(name))
    code = run_config(cfg, target, _overrides(experiment, overrides))
    result = load(target)
    result.exit_code = code
    return result


def run_config(
    cfg: dict[str, Any],
    run_dir: str | os.PathLike[str],
    overrides: Sequence[str] | None = None,
    *,
    valid: Validated | None = None,
    runtime: Runtime | None = None,
) -> int:
    """Run one composed job config into ``run_dir`` (:func:`trustsim.job.run_job`), or with ``preview=true``
    preview it (:func:`trustsim.preview.run_preview`: sends nothing; ``run_dir`` gets ``preview.json`` only).
    Returns the exit code. ``valid`` and ``runtime``: a launcher's (see :func:`trustsim.job.run_job`)."""
    args = list(overrides) if overrides is not None else None
    if cfg.get("preview") is True:  # send nothing; print requests, tokens, cost; no lock, manifest or table
        return run_preview(cfg, Path(run_dir), args, in_sweep=runtime is not None)
    return run_job(cfg, Path(run_dir), args, valid=valid, runtime=runtime)
