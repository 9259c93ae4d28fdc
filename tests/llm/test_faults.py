"""Retries, backoff, timeouts and failures against the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import time

import pytest

from trustsim.llm import ChatRequest, ProviderError
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.pacing import Backoff, RateLimiter


def req(text: str = "hello", **kw: object) -> ChatRequest:
    return ChatRequest(model="fake", messages=[{"role": "user", "content": text}], **kw)


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop", "garbage"])
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
    assert "re-run the same command" in str(info.value)
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
    with pytest.raises(ProviderError, match="TRUSTSIM_TEST_KEY"):
        asyncio.run(client.complete(req()))
    assert fake_server.requests == []


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    backoff = Backoff(base_s=1.0, max_s=8.0, seed=3)
    delays = [backoff.delay(a) for a in range(6)]
    for attempt, d in enumerate(delays):
        cap = min(8.0, 2.0**attempt)
        assert cap / 2 <= d <= cap
    assert Backoff(1.0, 8.0, seed=3).delay(0) == delays[0]  # seeded jitter
    assert backoff.delay(0, retry_after=5.0) == 5.0


def test_rate_limiter_spaces_requests() -> None:
    async def run() -> float:
        limiter = RateLimiter(requests_per_minute=600)  # one per 0.1 s
        start = time.perf_counter()
        await asyncio.gather(*(limiter.acquire() for _ in range(4)))
        return time.perf_counter() - start

    assert 0.28 <= asyncio.run(run()) < 3.0  # lower bound is the property; upper only catches a hang
