"""Config builders shared by the LLM-layer tests."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trustsim.llm import LLMClient, build_client, parse_llm_config, parse_model_config

REPO = Path(__file__).resolve().parents[2]


def model_dict(api_base: str | None = None, **over: object) -> dict:
    cfg: dict = {
        "name": "fake",
        "litellm_model": "openai/fake-model",
        "api_base": api_base,
        "api_key_env": "TRUSTSIM_TEST_KEY",
        "params": {"temperature": 0.0, "max_tokens": 64},
        "purpose_params": {"solve": {"max_tokens": 8}},
    }
    cfg.update(over)
    return cfg


def llm_dict(store: Path, **over: object) -> dict:
    cfg: dict = {
        "store_path": str(store),
        "max_retries": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "timeout_s": 5.0,
        "max_concurrency": 8,
    }
    cfg.update(over)
    return cfg


def client_of(model: Any, llm: Any, **kwargs: Any) -> LLMClient:
    """``build_client`` of the ``model`` and ``llm`` groups given as plain dicts (or DictConfigs), validated
    first as the job validates them; ``kwargs``: ``build_client``'s (``job``, ``store``, ``base_dir``)."""
    return build_client(parse_model_config(model), parse_llm_config(llm), **kwargs)


@functools.cache
def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[list[str]]:
    """Make ``folder`` read-only for commands run with the yielded prefix.

    As an ordinary user: chmod (prefix ``[]``). As root (permission bits do not bind root): a private
    read-only bind mount in a user + mount namespace (``unshare``). Skips the test when neither works.
    """
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield []
        finally:
            folder.chmod(mode)
        return
    if not _can_unshare():
        pytest.skip("cannot make a read-only folder as root here (no unshare)")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    yield ["unshare", "-rm", "sh", "-c", script, str(folder)]


def run_python(prefix: list[str], code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a Python snippet (with the repo importable) under a command prefix; returns the finished process."""
    return subprocess.run(
        [*prefix, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )
