"""Shared fixtures: compose configs and run jobs in-process (fast) without the CLI; build an expensive, read-only
fixture once per test run (shared by pytest-xdist's workers)."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parent.parent
CONF = REPO / "conf"


def compose_config(overrides: list[str]) -> dict:
    from trustsim import api

    return api.compose(None, overrides)


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> tuple[Path, Any]:
    """``build(folder)`` once per test run: returns the folder it filled and what it returned (JSON data).

    Under pytest-xdist every worker of the run asks for it: the first builds it in the run's shared temporary
    folder under a file lock, the others wait for the lock and read the result (the folder is read-only by
    convention: a test that damages it works on a copy). A build that failed leaves no result, so the next
    worker builds it again (and fails the same way)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        return folder, build(folder)
    root = tmp_path_factory.getbasetemp().parent / "built_once"  # the run's folder, above every worker's
    root.mkdir(exist_ok=True)
    folder, result = root / name, root / f"{name}.json"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return folder, json.loads(result.read_text(encoding="utf-8"))
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        value = build(folder)
        result.write_text(json.dumps(value), encoding="utf-8")
    return folder, value


def run_in_process(overrides: list[str], run_dir: Path) -> int:
    from trustsim import api

    return api.run(None, overrides, run_dir).exit_code


def cli_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: this checkout first on the path (whatever the working folder),
    litellm's offline cost map, then ``env``."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}


def cli(
    module: str,
    *args: str,
    cwd: Path | str = REPO,
    env: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` in a subprocess, for a test whose subject is the process (its exit code and
    output, start-up, signals, the working folder); ``prefix``: a command to run it under (``unshare ...``)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", module, *args],
        cwd=cwd, env=cli_env(env), capture_output=True, text=True, check=False, timeout=timeout,
    )  # fmt: skip


def analysis_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m analysis ARGS`` run in this process (no interpreter start-up), its exit code and output
    captured as a finished process's; for tests whose subject is what the subcommand writes."""
    from analysis.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["analysis", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture
def compose():
    return compose_config


@pytest.fixture
def run_job_dir(tmp_path):
    """Run a job in-process; returns (exit code, run directory)."""

    def _run(overrides: list[str], name: str = "run") -> tuple[int, Path]:
        run_dir = tmp_path / name
        return run_in_process(overrides, run_dir), run_dir

    return _run
