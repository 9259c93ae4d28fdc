"""The LLM path's per-call costs: the collector left alone, no extra task per call, a timeout backstop, zero
prices for models litellm cannot price, the bench."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from trustsim.llm import transport
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.transport import call_litellm, classify, get_litellm

ROOT = Path(__file__).resolve().parents[2]


def fake_response(
    text: str = '{"action": "pass"}', cost: float | None = 0.25, prompt_tokens: int = 11
) -> Any:
    message = SimpleNamespace(content=text, refusal=None)
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop")],
        usage=SimpleNamespace(prompt_tokens=prompt_tokens, completion_tokens=7),
        _hidden_params={"response_cost": cost},
    )


@pytest.mark.slow
def test_importing_litellm_leaves_the_garbage_collector_as_it_was() -> None:
    """get_litellm() changes nothing process-wide in the collector: no frozen heap, the thresholds the
    process had (here non-default ones, to tell them from a reset)."""
    code = (
        "import gc; from trustsim.llm.transport import get_litellm\n"
        "gc.set_threshold(700, 11, 12)\n"
        "get_litellm(); assert gc.get_threshold() == (700, 11, 12), gc.get_threshold()\n"
        "assert gc.get_freeze_count() == 0, gc.get_freeze_count()\n"
        "print('ok')"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def _recorder(monkeypatch: pytest.MonkeyPatch, cost: float | None, prompt_tokens: int = 11) -> list[dict]:
    litellm = get_litellm()
    calls: list[dict] = []

    async def acompletion(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return fake_response(cost=cost, prompt_tokens=prompt_tokens)

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    monkeypatch.setattr(transport, "_UNPRICED", set())
    return calls


def _call(model: str = "openai/m", params: dict | None = None, api_base: str | None = "http://x/v1") -> Any:
    return asyncio.run(
        call_litellm(model, [], params or {}, api_base=api_base, api_key="k", timeout_s=5, drop_params=True)
    )


def test_a_model_litellm_cannot_price_gets_zero_prices_after_its_first_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """litellm answered without a cost (not in its price map): later calls of that model and api base pass
    litellm's per-call prices as zero, so it stops searching its price map on every call. The recorded
    cost is 0 either way; another api base or model is still asked afresh."""
    calls = _recorder(monkeypatch, cost=None)
    assert [_call().cost_usd for _ in range(3)] == [0.0, 0.0, 0.0]
    assert "input_cost_per_token" not in calls[0]
    for kw in calls[1:]:
        assert kw["input_cost_per_token"] == 0.0 and kw["output_cost_per_token"] == 0.0
    _call(api_base="http://y/v1")
    _call(model="openai/other")
    assert "input_cost_per_token" not in calls[3] and "input_cost_per_token" not in calls[4]


def test_priced_models_and_configured_prices_are_left_to_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recorder(monkeypatch, cost=0.25)
    assert [_call().cost_usd for _ in range(2)] == [0.25, 0.25]
    assert all("input_cost_per_token" not in kw for kw in calls)
    calls = _recorder(monkeypatch, cost=None, prompt_tokens=0)  # no usage: litellm may have had none to price
    _call(), _call()
    assert all("input_cost_per_token" not in kw for kw in calls)
    calls = _recorder(monkeypatch, cost=None)
    own = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}  # the model's own params win
    _call(params=own), _call(params=own)
    assert calls[1]["input_cost_per_token"] == 1e-6 and calls[1]["output_cost_per_token"] == 2e-6


def test_zero_prices_do_not_change_what_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the fake server (a model outside litellm's price map): the priced call sends the same body
    and headers as the first, and both cost 0."""
    monkeypatch.setattr(transport, "_UNPRICED", set())
    messages = [{"role": "user", "content": "same"}]

    async def two(base: str) -> list[Any]:
        out = []
        for _ in range(2):
            out.append(
                await call_litellm(
                    "openai/fake-unpriced",
                    messages,
                    {"temperature": 0.0, "max_tokens": 16},
                    api_base=base,
                    api_key="k",
                    timeout_s=10,
                    drop_params=True,
                )
            )
        return out

    with FakeServer() as server:
        results = asyncio.run(two(server.api_base))
        assert ("openai/fake-unpriced", server.api_base) in transport._UNPRICED
        assert server.requests[0] == server.requests[1]
        assert [h.get("content-length") for h in server.headers] == [server.headers[0]["content-length"]] * 2
    assert [r.cost_usd for r in results] == [0.0, 0.0]
    assert results[0].prompt_tokens == results[1].prompt_tokens > 0


def test_call_litellm_creates_no_task_and_reads_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm = get_litellm()
    seen: dict[str, Any] = {}

    async def acompletion(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return fake_response()

    monkeypatch.setattr(litellm, "acompletion", acompletion)

    async def run() -> tuple[Any, int]:
        loop = asyncio.get_running_loop()
        created = 0
        default = loop.get_task_factory()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
            nonlocal created
            created += 1
            return default(loop, coro, **kw) if default else asyncio.Task(coro, loop=loop, **kw)

        loop.set_task_factory(factory)
        result = await call_litellm(
            "openai/m",
            [{"role": "user", "content": "hi"}],
            {"temperature": 0},
            api_base="http://127.0.0.1:9/v1",
            api_key="k",
            timeout_s=5,
            drop_params=True,
        )
        return result, created

    result, created = asyncio.run(run())
    assert created == 0  # the timeout backstop is a scope, not a wrapping task (asyncio.wait_for)
    assert (result.text, result.prompt_tokens, result.completion_tokens, result.cost_usd) == (
        '{"action": "pass"}',
        11,
        7,
        0.25,
    )
    assert seen["max_retries"] == 0 and seen["num_retries"] == 0 and seen["timeout"] == 5
    assert seen["api_base"] == "http://127.0.0.1:9/v1" and seen["temperature"] == 0


def test_backstop_times_out_a_call_that_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's own timeout normally ends a hung call; if it does not, the transport's backstop
    (timeout_s + 1) does, with a retryable timeout."""
    litellm = get_litellm()

    async def hang(**kwargs: Any) -> Any:
        await asyncio.Event().wait()

    monkeypatch.setattr(litellm, "acompletion", hang)
    start = time.perf_counter()
    with pytest.raises(TimeoutError) as info:
        asyncio.run(
            call_litellm("openai/m", [], {}, api_base=None, api_key=None, timeout_s=0.05, drop_params=True)
        )
    assert 1.0 <= time.perf_counter() - start < 5.0
    failure = classify(info.value)
    assert failure is not None and failure.retryable and "timeout" in failure.cause


@pytest.mark.slow  # five worker processes each import litellm: ~30-60 s on 2 busy cores
def test_throughput_bench_runs_and_prints_every_variant() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/benchmarks/bench_llm_throughput.py"),
            "--latency",
            "0.01",
            "--levels",
            "2",
            "--reps",
            "1",
            "--requests",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=True,
    ).stdout
    lines = out.splitlines()
    variants = ["bare", "httpx", "aiohttp", "transport", "client", "agent"]
    assert "median of 1" in lines[0] and "load avg" in lines[0]
    assert lines[1].split()[:7] == ["conc", "bare", "/s", "httpx", "/s", "aiohttp", "/s"]
    row = lines[2].split()
    assert row[0] == "2" and len(row) == 1 + 6 + 5  # rates of 6 variants, 5 ratios to bare
    rates = dict(zip(variants, map(float, row[1:7]), strict=True))
    assert all(r > 0 for r in rates.values())
    assert float(row[7 + 3]) == pytest.approx(rates["client"] / rates["bare"], abs=0.01)  # client/bare
    assert any(line.startswith("pooled over all runs") for line in lines)

    def table(heading: str) -> list[str]:  # the row of concurrency 2 under a heading
        at = next(i for i, line in enumerate(lines) if line.startswith(heading))
        assert lines[at + 1].split()[0] == "conc"
        return lines[at + 2].split()

    cpu = table("process CPU ms per request")
    assert cpu[0] == "2" and len(cpu) == 7 and all(float(x) > 0 for x in cpu[1:])
    ratio = table("paired ratio to bare")  # median [min,max] of 5 variants against bare
    assert ratio[0] == "2" and len(ratio) == 1 + 2 * 5
    medians = [float(x) for x in ratio[1::2]]
    # one repetition: the paired ratio is the ratio of the two runs, as in the median table
    assert medians == pytest.approx([float(x) for x in row[7:12]], abs=0.011)
    assert ratio[2] == f"[{ratio[1]},{ratio[1]}]"
    cpu_ratio = table("CPU ratio, bare CPU per request")
    assert cpu_ratio[0] == "2" and len(cpu_ratio) == 1 + 2 * 5
    assert float(cpu_ratio[1 + 2 * 3]) == pytest.approx(float(cpu[1]) / float(cpu[5]), abs=0.011)  # client


def test_a_configured_price_is_given_to_litellm_and_recorded(
    fake_server: FakeServer, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model config with ``price``: litellm gets the same per-token prices (no price-map search), the
    recorded cost is the config's, and nothing about pricing reaches the provider. Without ``price`` the
    first call leaves pricing to litellm."""
    from trustsim.llm import ChatRequest

    from .helpers import model_dict

    litellm = get_litellm()
    real = litellm.acompletion
    seen: list[dict[str, Any]] = []

    async def spy(**kwargs: Any) -> Any:
        seen.append(dict(kwargs))
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    monkeypatch.setattr(transport, "_UNPRICED", set())
    price = {"input_per_mtok": 1.0, "output_per_mtok": 4.0}
    priced = make_client(model=model_dict(fake_server.api_base, price=price))
    plain = make_client(model=model_dict(fake_server.api_base, name="plain"))

    async def ask() -> list[Any]:
        out = [
            await priced.complete(ChatRequest("fake", [{"role": "user", "content": "priced"}])),
            await plain.complete(ChatRequest("plain", [{"role": "user", "content": "plain"}])),
        ]
        await priced.aclose()
        await plain.aclose()
        return out

    first, second = asyncio.run(ask())
    assert seen[0]["input_cost_per_token"] == 1e-6 and seen[0]["output_cost_per_token"] == 4e-6
    assert "input_cost_per_token" not in seen[1]
    assert first.cost_usd == pytest.approx((first.prompt_tokens * 1.0 + first.completion_tokens * 4.0) / 1e6)
    assert first.cost_usd > 0 and second.cost_usd == 0.0
    assert all(set(r) == {"model", "messages", "temperature", "max_tokens"} for r in fake_server.requests)
