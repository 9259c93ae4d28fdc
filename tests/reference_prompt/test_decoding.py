"""The six study model configs send the study's decoding settings, as captured at the wire.

Each config's decision, own-answer and verifier calls go through trustsim's client and litellm to a local
capture server (OpenAI, Anthropic and Gemini wire formats); the bodies must carry exactly the settings the
reference helpers sent (cyjabc2020/Escape-room-v2 @ 74f0fd1, ``code/src/utils``):

- ``openai_helper.py:64-79``: effort "high" → ``max_completion_tokens`` 16384 + ``reasoning_effort``; the
  verifier (``games/moderator.py:392``, no effort) → 50 and no ``reasoning_effort`` key;
- ``anthropic_helper.py:41-47, 86-113`` (``call_anthropic``): "adaptive" → ``thinking: {type: adaptive}``, ``max_tokens`` 16384; the
  verifier → ``max_tokens`` 50, no ``thinking``;
- ``gemini_helper.py:41-54, 126-188`` (``call_gemini``): 3.x "high" → ``thinking_level: HIGH``, 16384 output tokens;
  verifier → ``LOW``, 4096; 2.5 "high" → ``thinking_budget: -1``, 16384; verifier → ``thinking_budget: 0``, 50 (no
  ``includeThoughts`` in either); the thinking config as the google-genai SDK puts it on the wire (proto field
  names, the enum's upper-case names), captured from ``call_gemini`` itself;
- own answer (``games/escape_room.py:525``): the decision's effort with ``max(50, 16384)`` → the decision's
  settings for every direct-API model.

The Replicate route (``replicate_helper.py:63-113``, ``call_replicate``) is checked on litellm's request to Replicate.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.reference_prompt.capture_server import CaptureServer
from trustsim.llm import ChatRequest
from trustsim.llm.client import LLMClient
from trustsim.llm.config import parse_llm_config, parse_model_config

ROOT = Path(__file__).resolve().parents[2]
OPENAI_HIGH = {"max_completion_tokens": 16384, "reasoning_effort": "high"}
OPENAI_VERIFY = {"max_completion_tokens": 50}
CLAUDE = {"max_tokens": 16384, "thinking": {"type": "adaptive"}}
CLAUDE_VERIFY = {"max_tokens": 50}


def gemini(tokens: int, thinking: dict[str, Any]) -> dict[str, Any]:
    return {"generationConfig": {"max_output_tokens": tokens, "thinkingConfig": thinking}}


# model config → (path suffix, model id in the body, decision = own answer, verifier)
EXPECTED = {
    "gpt-5.4-mini": ("/chat/completions", "gpt-5.4-mini-2026-03-17", OPENAI_HIGH, OPENAI_VERIFY),
    "gpt-5.1": ("/chat/completions", "gpt-5.1-2025-11-13", OPENAI_HIGH, OPENAI_VERIFY),
    "claude-opus-4-6": ("/v1/messages", "claude-opus-4-6", CLAUDE, CLAUDE_VERIFY),
    "claude-sonnet-4-6": ("/v1/messages", "claude-sonnet-4-6", CLAUDE, CLAUDE_VERIFY),
    "gemini-3.1-pro": (
        ":generateContent",
        "gemini-3.1-pro-preview",
        gemini(16384, {"thinking_level": "HIGH"}),
        gemini(4096, {"thinking_level": "LOW"}),
    ),
    "gemini-2.5-flash": (
        ":generateContent",
        "gemini-2.5-flash",
        gemini(16384, {"thinking_budget": -1}),
        gemini(50, {"thinking_budget": 0}),
    ),
}
WIRE_KEYS = {"messages", "contents", "model", "stream"}  # what is not a decoding setting


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "conf" / "model" / f"{name}.yaml").read_text())


def settings(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The decoding settings of a captured body (everything but the messages and the model id)."""
    out = {k: v for k, v in body.items() if k not in WIRE_KEYS}
    if "generateContent" in path:
        out = {"generationConfig": body.get("generationConfig")}
    return out


def capture(name: str, base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Send a decision, an own-answer and a verifier call with a model config from conf/model."""
    cfg = load(name)
    monkeypatch.setenv(cfg["api_key_env"], "dummy-key-for-tests")
    if not cfg["litellm_model"].startswith("replicate/"):
        cfg["api_base"] = base + ("/v1" if cfg["litellm_model"].startswith("openai/") else "")
    model = parse_model_config(cfg)
    client = LLMClient(model, parse_llm_config({"max_retries": 0}), store=None)
    messages = [{"role": "user", "content": "\nYou are Player A in an escape room survival game.\n"}]

    async def go() -> None:
        for purpose in ("decision", "own_answer", "solve"):
            await client.complete(ChatRequest(model.name, messages, {}, purpose=purpose))

    asyncio.run(go())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_study_model_configs_send_the_study_decoding(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    suffix, model_id, decision, verifier = EXPECTED[name]
    with CaptureServer() as srv:
        capture(name, srv.url, monkeypatch)
        got = list(srv.requests)
    assert len(got) == 3
    for (path, body), want in zip(got, (decision, decision, verifier), strict=True):
        assert path.endswith(suffix)
        assert (body.get("model") or path.split("/models/")[-1].split(":")[0]) == model_id
        assert settings(path, body) == want, (name, path, json.dumps(body)[:400])
        assert not any(m.get("role") == "system" for m in body.get("messages", []))


def test_replicate_route_sends_the_study_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """GPT-5.1 via Replicate (replicate_helper.py:81-91): prompt verbatim, max_tokens 1024 / 50 and the
    seat's effort; the verifier sends effort "none". litellm adds max_new_tokens (same value)."""
    import httpx
    import litellm.llms.replicate.chat.handler as handler
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler, HTTPHandler

    posted: list[dict[str, Any]] = []

    def respond(req: httpx.Request) -> httpx.Response:
        if req.method == "POST":
            posted.append(json.loads(req.content))
            url = "https://api.replicate.com/v1/predictions/x"
            return httpx.Response(201, json={"id": "x", "status": "starting", "urls": {"get": url}})
        return httpx.Response(200, json={"id": "x", "status": "succeeded", "output": ["DECISION: Pass"]})

    def sync_client(*args: Any, **kwargs: Any) -> HTTPHandler:
        c = HTTPHandler()
        c.client = httpx.Client(transport=httpx.MockTransport(respond))
        return c

    def async_client(*args: Any, **kwargs: Any) -> AsyncHTTPHandler:
        c = AsyncHTTPHandler()
        c.client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
        return c

    monkeypatch.setattr(handler, "get_httpx_client", sync_client)
    monkeypatch.setattr(handler, "get_async_httpx_client", async_client)
    capture("gpt-5.1-replicate", "http://unused", monkeypatch)
    prompt = "\nYou are Player A in an escape room survival game.\n"
    inputs = [p["input"] for p in posted]
    assert [i["prompt"] for i in inputs] == [prompt] * 3
    assert [(i["max_tokens"], i["reasoning_effort"]) for i in inputs] == [
        (1024, "high"),
        (50, "high"),
        (50, "none"),
    ]
    assert [i.get("max_new_tokens") for i in inputs] == [1024, 50, 50]
