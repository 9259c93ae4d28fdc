"""Two loopback fake OpenAI-compatible servers, one per model of a mixed team."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustsim.llm.fake_server import FakeServer

KEY_ONE, KEY_TWO = "TRUSTSIM_TEAM_KEY_ONE", "TRUSTSIM_TEAM_KEY_TWO"


@pytest.fixture
def keys(monkeypatch):
    """Each server's key variable set (every seat's client reads its own)."""
    monkeypatch.setenv(KEY_ONE, "sk-team-one-0123456789abcdef")
    monkeypatch.setenv(KEY_TWO, "sk-team-two-0123456789abcdef")


@pytest.fixture
def servers(keys):
    """(server one, server two) on 127.0.0.1, different ports, answering as the escape room expects."""
    with FakeServer() as one, FakeServer() as two:
        yield one, two


def model_mapping(name: str, server: FakeServer, key_env: str) -> str:
    """A full model config for a seat, as a Hydra override value."""
    return (
        f"{{name: {name}, litellm_model: openai/{name}, api_base: '{server.api_base}', "
        f"api_key_env: {key_env}}}"
    )


def job_model(name: str, server: FakeServer, key_env: str) -> list[str]:
    """Overrides pointing the job's ``model`` group at ``server``."""
    return [
        "model=openai_compatible",
        f"model.name={name}",
        f"model.litellm_model=openai/{name}",
        f"model.api_base={server.api_base}",
        f"model.api_key_env={key_env}",
    ]


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def bearer(server: FakeServer) -> set[str]:
    """The Authorization headers the server saw."""
    return {h.get("authorization", "") for h in server.headers}
