"""Fixtures of the LLM-layer tests: a loopback fake server and clients with short backoff."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from trustsim.llm import LLMClient, build_client
from trustsim.llm.fake_server import FakeServer


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


def model_dict(api_base: str | None = None, **over: object) -> dict:
    cfg: dict = {
        "name": "fake",
        "litellm_model": "openai/fake-model",
        "api_base": api_base,
        "api_key_env": "TRUSTSIM_TEST_KEY",
        "params": {"temperature": 0.0, "max_tokens": 64},
        "subtask_params": {"max_tokens": 8},
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


@pytest.fixture
def make_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "sk-test-not-a-real-key")

    def make(api_base: str | None = None, model: dict | None = None, **llm_over: object) -> LLMClient:
        return build_client(model or model_dict(api_base), llm_dict(tmp_path / "store.sqlite", **llm_over))

    return make
