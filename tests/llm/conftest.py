"""Fixtures of the LLM-layer tests: a loopback fake server and clients with short backoff."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from trustsim.llm import LLMClient
from trustsim.llm.fake_server import FakeServer

from .helpers import client_of, llm_dict, model_dict


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


@pytest.fixture
def make_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "sk-test-not-a-real-key")

    def make(api_base: str | None = None, model: dict | None = None, **llm_over: object) -> LLMClient:
        return client_of(model or model_dict(api_base), llm_dict(tmp_path / "store.sqlite", **llm_over))

    return make
