"""Endpoint limits (trustsim.llm.endpoint): shared per endpoint, rate and token pacing, AIMD, Retry-After."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from trustsim.llm import ChatRequest
from trustsim.llm.config import EndpointLimits, parse_llm_config, parse_model_config
from trustsim.llm.endpoint import SAFETY, Endpoint, EndpointKey, Limits, endpoint_for, endpoints, limits_of
from trustsim.llm.fake_server import FakeServer

from .helpers import client_of, llm_dict, model_dict

KEY = EndpointKey("openai/m", "http://x/v1", "K")


def test_limits_come_from_the_model_over_the_llm_group() -> None:
    llm = parse_llm_config({"max_concurrency": 50, "requests_per_minute": 600, "tokens_per_minute": 9000})
    plain = parse_model_config(model_dict())
    assert limits_of(plain, llm) == Limits(50, 600, 9000)
    own = parse_model_config(model_dict(limits={"max_concurrency": 4, "requests_per_minute": 0}))
    assert own.limits == EndpointLimits(4, 0, None) and limits_of(own, llm) == Limits(4, 0, 9000)
    local = parse_model_config({"name": "s", "litellm_model": "trustsim/smollm2", "provider": "local"})
    assert limits_of(local, llm).max_concurrency == 1  # llama.cpp: one request at a time


def test_the_strictest_settings_of_an_endpoint_s_clients_apply() -> None:
    async def run() -> tuple[Endpoint, Endpoint, list[Endpoint]]:
        first = endpoint_for(KEY, Limits(64, 600, None))
        again = endpoint_for(KEY, Limits(8, None, 1000))
        other = endpoint_for(EndpointKey("openai/m", "http://x/v1", "OTHER_KEY"), Limits(64))
        assert other is not first
        return first, again, endpoints()

    first, again, known = asyncio.run(run())
    assert first is again and first.limits == Limits(8, 600, 1000) and first.window == 8
    assert len(known) == 2


async def _starts(endpoint: Endpoint, n: int, hold_s: float = 0.0) -> list[float]:
    times: list[float] = []

    async def one() -> None:
        async with endpoint.call(10) as call:
            times.append(time.monotonic())
            await asyncio.sleep(hold_s)
            call.answered(10)

    await asyncio.gather(*(one() for _ in range(n)))
    return times


def test_request_starts_are_spaced_by_the_rate() -> None:
    async def run() -> list[float]:
        return await _starts(Endpoint(KEY, Limits(64, requests_per_minute=1200)), 5)

    times = asyncio.run(run())
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.05 * (1 + SAFETY) - 1e-3  # 1200/min: one start per 50 ms, plus the margin
    assert times[-1] - times[0] < 2.0  # (only catches a hang)


def test_the_first_request_goes_alone_and_the_next_starts_an_interval_after_its_outcome() -> None:
    """A first call's one-time work (importing litellm, its HTTP client) delays its send: spacing from its
    start would let the second request leave with it."""

    async def run(first_rpm: float | None) -> tuple[float, float, float]:
        endpoint = endpoint_for(KEY, Limits(64, requests_per_minute=first_rpm))
        marks: dict[str, float] = {}

        async def first() -> None:
            async with endpoint.call(10) as call:
                endpoint_for(KEY, Limits(64, requests_per_minute=600))  # another job's client: 100 ms apart
                await asyncio.sleep(0.3)  # slow to leave, then answered
                marks["outcome"] = time.monotonic()
                call.answered(10)

        async def second() -> None:
            await asyncio.sleep(0.01)
            async with endpoint.call(10) as call:
                marks["second"] = time.monotonic()
                call.answered(10)

        await asyncio.gather(first(), second())
        third = await _starts(endpoint, 2)  # once warm: spaced from their starts
        return marks["second"] - marks["outcome"], third[0] - marks["second"], third[1] - third[0]

    for first_rpm in (600, None):  # whichever client created the endpoint
        after_outcome, *gaps = asyncio.run(run(first_rpm))
        interval = 0.1 * (1 + SAFETY)
        assert after_outcome >= interval - 1e-3 and after_outcome < 2.0
        assert min(gaps) >= interval - 1e-3


def test_concurrency_never_exceeds_the_window() -> None:
    async def run() -> int:
        endpoint = Endpoint(KEY, Limits(3))
        peak = 0

        async def one() -> None:
            nonlocal peak
            async with endpoint.call(1) as call:
                peak = max(peak, endpoint.in_flight)
                await asyncio.sleep(0.01)
                call.answered(1)

        await asyncio.gather(*(one() for _ in range(12)))
        return peak

    assert asyncio.run(run()) == 3


def test_aimd_halves_once_per_window_and_grows_back_by_one_per_window() -> None:
    async def run() -> list[float]:
        endpoint = Endpoint(KEY, Limits(16))
        seen = [endpoint.window]
        calls = [await endpoint._admit(1) for _ in range(4)]  # four requests out under the same window
        calls[0].failed(status=429)
        calls[1].failed(status=429)  # sent before the cut: no second cut
        seen.append(endpoint.window)
        calls[2].failed(status=503)
        seen.append(endpoint.window)
        later = await endpoint._admit(1)
        later.failed(timeout=True)  # sent after the cut: cuts again
        seen.append(endpoint.window)
        calls[3].answered(5)
        seen.append(endpoint.window)
        for _ in range(8):
            (await endpoint._admit(1)).answered(1)
        seen.append(endpoint.window)
        assert endpoint.counts.rate_limited == 2 and endpoint.counts.overloaded == 4
        assert endpoint.counts.sent == 13 and endpoint.counts.answered == 9 and endpoint.counts.tokens == 13
        return seen

    seen = asyncio.run(run())
    assert seen[:4] == [16, 8, 8, 4]
    assert seen[4] == pytest.approx(4.25) and seen[5] == pytest.approx(5.9, abs=0.2)  # +1/window per answer


def test_retry_after_pauses_every_request_of_the_endpoint() -> None:
    async def run() -> float:
        endpoint = Endpoint(KEY, Limits(8))
        (await endpoint._admit(1)).failed(status=429, retry_after=0.3)
        start = time.monotonic()
        async with endpoint.call(1) as call:
            call.answered(1)
        return time.monotonic() - start

    assert 0.29 <= asyncio.run(run()) < 2.0


def test_tokens_per_minute_meter_estimates_then_answers() -> None:
    async def run() -> tuple[float, float]:
        endpoint = Endpoint(KEY, Limits(8, tokens_per_minute=6000))  # 100 tokens/s, bucket of 6000
        start = time.monotonic()
        async with endpoint.call(5000) as call:  # fits the full bucket at once
            call.answered(5990)  # 990 more than estimated: the bucket is ~10 tokens now
        async with endpoint.call(30) as call:  # waits ~0.2 s for 20 more tokens
            call.answered(30)
        return time.monotonic() - start, endpoint._bucket

    elapsed, _ = asyncio.run(run())
    assert 0.18 <= elapsed < 2.0


def test_clients_of_two_jobs_share_the_endpoint_limits(tmp_path, monkeypatch) -> None:
    """Two clients (two jobs) to one endpoint together stay within its concurrency and rate."""
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "test-key-0000")
    with FakeServer(delay_s=0.05) as srv:
        model = model_dict(srv.api_base)
        llm = llm_dict(tmp_path / "s.sqlite", max_concurrency=3, requests_per_minute=1200)
        one = client_of(model, llm, job="a")
        two = client_of(model, {**llm, "store_path": str(tmp_path / "t.sqlite")}, job="b")

        async def run() -> None:
            reqs = [ChatRequest("fake", [{"role": "user", "content": f"q{i}"}]) for i in range(8)]
            await asyncio.gather(*(c.complete(r) for r in reqs for c in (one, two)))

        start = time.monotonic()
        asyncio.run(run())
        elapsed = time.monotonic() - start
        one.store.close()
        two.store.close()
    assert len(srv.requests) == 16 and srv.peak_in_flight <= 3
    assert elapsed >= 15 * 0.05  # 16 starts at 1200/min across both clients, not per client
