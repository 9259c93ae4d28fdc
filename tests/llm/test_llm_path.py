"""The LLM path's per-call costs: a frozen import heap, no extra task per call, a timeout backstop, the bench."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from trustsim.llm.transport import call_litellm, classify, get_litellm

ROOT = Path(__file__).resolve().parents[2]


def fake_response(text: str = '{"action": "pass"}') -> Any:
    message = SimpleNamespace(content=text, refusal=None)
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason="stop")],
        usage=SimpleNamespace(prompt_tokens=11, completion_tokens=7),
        _hidden_params={"response_cost": 0.25},
    )


def test_get_litellm_freezes_the_import_heap() -> None:
    """litellm's ~370,000 import-time objects leave the collector's scans (each full collection would
    otherwise walk them again, ~0.4 ms per call at concurrency 64)."""
    get_litellm()
    assert gc.get_freeze_count() > 100_000


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
    cpu = lines[-1].split()
    assert cpu[0] == "2" and len(cpu) == 7 and all(float(x) > 0 for x in cpu[1:])
