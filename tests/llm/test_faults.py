"""Retries, backoff, timeouts and failures against the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import time

import pytest

from trustsim.llm import ChatRequest, MissingKeyError, ProviderError
from trustsim.llm.client import PLACEHOLDER_KEY
from trustsim.llm.fake_server import BIG_BYTES, FakeServer, draw_fault
from trustsim.llm.pacing import Backoff

from .helpers import model_dict


def req(text: str = "hello", **kw: object) -> ChatRequest:
    return ChatRequest(model="fake", messages=[{"role": "user", "content": text}], **kw)


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop", "garbage", "empty", "null"])
def test_retryable_fault_is_retried_then_succeeds(fault, fake_server: FakeServer, make_client) -> None:
    client = make_client(fake_server.api_base)
    fake_server.script(fault, fault)
    resp = asyncio.run(client.complete(req()))
    assert resp.text.startswith('{"action": "pass"')
    assert not resp.cached
    assert len(fake_server.requests) == 3
    stats = client.stats()
    assert stats["calls_sent"] == 1 and stats["retries"] == 2


def test_retry_budget_exhausted_raises_provider_error_naming_cause(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, max_retries=2)
    fake_server.script("500", "500", "500", "500")
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert "500" in info.value.cause
    assert info.value.attempts == 3
    assert "re-run the same command" in info.value.resume and "re-run" not in str(info.value)
    assert len(fake_server.requests) == 3
    assert len(client.store) == 0  # a provider error is never stored as a response


@pytest.mark.parametrize("fault", ["400", "401"])
def test_non_retryable_error_fails_at_once(fault, fake_server, make_client) -> None:
    client = make_client(fake_server.api_base)
    fake_server.script(fault)
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert not info.value.retryable and info.value.attempts == 1
    assert fault in info.value.cause
    assert len(fake_server.requests) == 1


def test_connection_refused_is_retried_until_budget(make_client) -> None:
    with FakeServer() as server:
        api_base = server.api_base
    client = make_client(api_base, max_retries=1)
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert info.value.retryable and info.value.attempts == 2


def test_timeout_is_retried(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, timeout_s=0.3)
    fake_server.script("hang")
    start = time.perf_counter()
    resp = asyncio.run(client.complete(req()))
    assert resp.text and time.perf_counter() - start < 10  # one 0.3 s timeout + one backoff, not a hang
    assert client.stats()["retries"] == 1


def test_missing_api_key_env_is_a_clear_error(fake_server, make_client, monkeypatch) -> None:
    client = make_client(fake_server.api_base)
    monkeypatch.delenv("TRUSTSIM_TEST_KEY")
    with pytest.raises(MissingKeyError, match="TRUSTSIM_TEST_KEY") as info:
        asyncio.run(client.complete(req()))
    assert info.value.key == "model.api_key_env" and "export TRUSTSIM_TEST_KEY=" in info.value.resume
    assert fake_server.requests == []


def test_missing_api_key_env_fails_when_the_client_is_built(fake_server, make_client, monkeypatch) -> None:
    monkeypatch.delenv("TRUSTSIM_TEST_KEY", raising=False)
    with pytest.raises(MissingKeyError, match="TRUSTSIM_TEST_KEY"):
        make_client(fake_server.api_base)


def test_no_key_variable_sends_a_placeholder_and_works(fake_server, make_client) -> None:
    client = make_client(model=model_dict(fake_server.api_base, api_key_env=None))
    resp = asyncio.run(client.complete(req()))
    assert resp.text and len(fake_server.requests) == 1
    assert fake_server.headers[0]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


@pytest.mark.parametrize("fault", ["empty", "null"])
def test_broken_answers_are_never_stored_and_fail_after_the_budget(fault, fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, max_retries=2)
    fake_server.script(fault, fault, fault)
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert "empty provider response" in info.value.cause and info.value.retryable
    assert len(client.store) == 0 and len(fake_server.requests) == 3
    assert client.stats()["retries"] == 2 and client.stats()["failed_attempts"] == 3


def test_null_content_after_a_length_stop_is_behaviour() -> None:
    from types import SimpleNamespace as NS

    from trustsim.llm.transport import EmptyResponseError, answer_text

    length = NS(choices=[NS(message=NS(content=None), finish_reason="length")])
    assert answer_text(length) == ""  # the model spent its budget: recorded as an empty answer
    refusal = NS(choices=[NS(message=NS(content=None, refusal="I can't help"), finish_reason="stop")])
    assert answer_text(refusal) == "I can't help"
    with pytest.raises(EmptyResponseError):
        answer_text(NS(choices=[NS(message=NS(content=None), finish_reason="stop")]))
    with pytest.raises(EmptyResponseError):
        answer_text(NS(choices=[]))


def test_a_key_echoed_by_the_provider_is_redacted(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base)
    fake_server.script("401echo")
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert "sk-test-not-a-real-key" in fake_server.headers[0]["authorization"]  # the key was sent ...
    assert "sk-test-not-a-real-key" not in str(info.value)  # ... and is not in the error
    assert "***redacted***" in str(info.value) and "401" in info.value.cause
    assert "TRUSTSIM_TEST_KEY" in info.value.resume  # the advice names the variable to check


def test_retry_counter_counts_resends_actually_made(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, max_retries=6)
    fake_server.script("500", "429", "drop", "empty")
    asyncio.run(client.complete(req()))
    stats = client.stats()
    assert len(fake_server.requests) == 5 == stats["calls_sent"] + stats["retries"]
    assert stats["retries"] == 4 and stats["failed_attempts"] == 4


def test_hang_past_the_timeout_then_budget(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, timeout_s=0.3, max_retries=1)
    fake_server.script("hang", "hang")
    start = time.perf_counter()
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(req()))
    assert "timeout" in info.value.cause.lower() or "timed out" in info.value.cause.lower()
    assert info.value.attempts == 2 and time.perf_counter() - start < 15


def test_a_5_mb_answer_is_taken_whole(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base)
    fake_server.script("big")
    resp = asyncio.run(client.complete(req()))
    assert len(resp.text) == BIG_BYTES


def test_mixed_faults_are_deterministic_per_request() -> None:
    mix = {"empty": 0.3, "500": 0.2}
    bodies = [f"body {i}".encode() for i in range(400)]
    first = [draw_fault(mix, b, 0) for b in bodies]
    assert first == [draw_fault(mix, b, 0) for b in bodies]
    share = sum(f is not None for f in first) / len(first)
    assert 0.4 < share < 0.6
    assert [draw_fault(mix, b, 1) for b in bodies] != first  # a retry draws afresh


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    backoff = Backoff(base_s=1.0, max_s=8.0, seed=3)
    delays = [backoff.delay(a) for a in range(6)]
    for attempt, d in enumerate(delays):
        cap = min(8.0, 2.0**attempt)
        assert cap / 2 <= d <= cap
    assert Backoff(1.0, 8.0, seed=3).delay(0) == delays[0]  # seeded jitter
    assert backoff.delay(0, retry_after=5.0) == 5.0


@pytest.mark.parametrize(("provider", "timeout"), [("local", None), ("litellm", 0.3)])
def test_the_embedded_model_has_no_timeout(tmp_path, provider, timeout) -> None:
    """An embedded-model call runs in this process and cannot be stopped: no timeout (so no retry for
    slowness, which would redo the whole computation); an API call keeps ``llm.timeout_s``."""
    from trustsim.llm import LLMClient
    from trustsim.llm.config import parse_llm_config, parse_model_config
    from trustsim.llm.transport import CallResult

    seen: list[float | None] = []

    async def slow_transport(model, messages, params, *, timeout_s, **kwargs) -> CallResult:
        seen.append(timeout_s)
        await asyncio.sleep(0.5)  # longer than llm.timeout_s: only a timeout would cut it short
        return CallResult("ok", 3, 1, 0.0, 0.5)

    model = parse_model_config({"name": "m", "litellm_model": "trustsim/m", "provider": provider})
    llm = parse_llm_config({"timeout_s": 0.3, "cache": False, "backoff_base_s": 0.01})
    client = LLMClient(model, llm, None, transport=slow_transport)
    response = asyncio.run(client.complete(ChatRequest("m", [{"role": "user", "content": "hi"}])))
    assert response.text == "ok" and seen == [timeout] and client.stats()["retries"] == 0
