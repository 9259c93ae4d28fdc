"""Shared fixtures: compose configs and run jobs in-process (fast) without the CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parent.parent
CONF = REPO / "conf"


def compose_config(overrides: list[str]) -> dict:
    from trustsim import api

    return api.compose(None, overrides)


def run_in_process(overrides: list[str], run_dir: Path) -> int:
    from trustsim import api

    return api.run(None, overrides, run_dir).exit_code


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
