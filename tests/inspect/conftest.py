"""Shared pieces of the Inspect tests: inspect-ai present (else skipped off CI), a deterministic reply for the
loopback OpenAI-compatible server, Inspect's ``openai-api`` provider pointed at it, logs read back."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI"):
    import inspect_ai  # noqa: F401  (CI installs the inspect extra: its absence is a failure)
else:
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install -e '.[inspect]')")

from tests.card.conftest import schema_reply

MODEL = "fake-model"
DECISIONS = (
    "DECISION: Pass\nREASONING: waiting.",
    "DECISION: Verify: Q1\nREASONING: check Q1.",
    "DECISION: Verify: Q4\nREASONING: check the partner.",
    "DECISION: Verify: Q2\nREASONING: check Q2.",
)


def game_reply(payload: dict[str, Any]) -> str:
    """An answer chosen by a hash of the request's messages: the same request gets the same answer, whoever
    sends it (trustsim through litellm, or Inspect); a JSON answer when the request asks for a schema."""
    if payload.get("response_format"):
        return schema_reply(payload)
    digest = hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).digest()
    return DECISIONS[digest[0] % len(DECISIONS)]


def inspect_service(monkeypatch: pytest.MonkeyPatch, name: str, server: Any) -> str:
    """Inspect's ``openai-api/<service>/<model>`` pointed at ``server`` (its key and base URL variables). The
    service is named after the server's port: Inspect keeps a model it made (by name) for the whole process,
    so a service name reused for a new server would still reach the old one."""
    service = f"{name}{server.port}"
    env = service.upper().replace("-", "_")
    monkeypatch.setenv(f"{env}_API_KEY", "sk-inspect-test-not-a-key")
    monkeypatch.setenv(f"{env}_BASE_URL", server.api_base)
    return f"openai-api/{service}/{MODEL}"


def run_files(sample: Any) -> dict[str, str]:
    """The run directory a sample of a trustsim task kept (file name → text)."""
    from analysis.inspect_logs import RUN_FILES_KEY

    return sample.store[RUN_FILES_KEY]


def read_log(path: str | Path) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path), resolve_attachments=True)


def eval_task(task: str, log_dir: Path, model: str = "mockllm/model", **kwargs: Any) -> Any:
    """``inspect_ai.eval`` of one trustsim task, quietly; its log (read back with every field)."""
    from inspect_ai import eval as inspect_eval

    kwargs = {"max_retries": 2, "timeout": 60, **kwargs}  # a broken test fails fast
    (log,) = inspect_eval(f"trustsim/{task}", model=model, log_dir=str(log_dir), display="none", **kwargs)
    assert log.status == "success", log.error
    return read_log(log.location)


@pytest.fixture(scope="session")
def mockllm_log(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Two mid2strike games with Inspect's ``mockllm/model`` (its answers are not decisions: every one is
    recorded as invalid, as trustsim records any unparseable answer)."""
    logs = tmp_path_factory.mktemp("inspect_mockllm")
    return eval_task(
        "escape_room",
        logs,
        task_args={"overrides": ["game.games=2", "game.own_answer=exact", "game.verifier=exact"]},
    )
