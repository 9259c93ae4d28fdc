"""Decision throughput of trustsim's LLM client vs bare ``litellm.acompletion`` (same concurrency).

A fake OpenAI-compatible server (separate process, fixed latency) answers every request. For each
concurrency level, both paths send N distinct requests and we report requests/second, the ratio
trustsim / bare, and the speed-up over the sequential (concurrency 1) rate. trustsim's path includes the
request store (SQLite, a fresh file per level, so nothing is a cache hit) and parsing the answer.

    python tests/benchmarks/bench_llm_throughput.py [--latency 0.2] [--levels 1,8,32,64] [--reps 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.escape_room.llm_parse import parse_decision
from trustsim.llm import ChatRequest, build_client
from trustsim.llm.transport import get_litellm


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustsim.llm.fake_server", "--port", "0", "--delay", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    line = proc.stdout.readline().strip() if proc.stdout else ""
    if not line.startswith("PORT "):
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


def messages(tag: str, i: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "rules " * 100}, {"role": "user", "content": f"{tag} request {i}"}]


async def bare(api_base: str, n: int, conc: int, tag: str) -> float:
    litellm = get_litellm()
    sem = asyncio.Semaphore(conc)

    async def one(i: int) -> None:
        async with sem:
            r = await litellm.acompletion(
                model="openai/fake-model",
                messages=messages(tag, i),
                api_base=api_base,
                api_key="not-a-key",
                max_retries=0,
                timeout=30,
            )
            assert r.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - start)


async def ours(api_base: str, n: int, conc: int, tag: str, store: Path) -> float:
    os.environ["BENCH_FAKE_KEY"] = "not-a-key"
    model = {
        "name": "fake",
        "litellm_model": "openai/fake-model",
        "api_base": api_base,
        "api_key_env": "BENCH_FAKE_KEY",
    }
    client = build_client(model, {"store_path": str(store), "max_concurrency": conc, "timeout_s": 30})

    async def one(i: int) -> None:
        resp = await client.complete(ChatRequest("fake", messages(tag, i)))
        assert parse_decision(resp.text).action is not None

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    rate = n / (time.perf_counter() - start)
    assert client.stats()["calls_sent"] == n
    await client.aclose()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", default="1,8,32,64")
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    proc, api_base = start_server(args.latency)
    tmp = Path(tempfile.mkdtemp(prefix="bench_llm_"))
    try:
        get_litellm()
        asyncio.run(bare(api_base, 4, 4, "warm"))  # warm up clients and imports
        results: dict[int, tuple[float, float]] = {}
        for conc in levels:
            n = max(16, conc * 4)
            b_best = o_best = 0.0
            for rep in range(args.reps):  # interleaved, best of reps (noise on a shared machine)
                b_best = max(b_best, asyncio.run(bare(api_base, n, conc, f"b{conc}-{rep}")))
                o_best = max(
                    o_best, asyncio.run(ours(api_base, n, conc, f"o{conc}-{rep}", tmp / f"s{conc}-{rep}.db"))
                )
            results[conc] = (b_best, o_best)
        seq_b, seq_o = results.get(1, (float("nan"), float("nan")))
        print(
            f"fake server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} cores, best of {args.reps}"
        )
        print(
            f"{'conc':>5} {'bare req/s':>11} {'trustsim req/s':>15} {'ratio':>6} {'bare xseq':>10} {'ours xseq':>10}"
        )
        for conc, (b, o) in results.items():
            print(f"{conc:>5} {b:>11.1f} {o:>15.1f} {o / b:>6.2f} {b / seq_b:>10.1f} {o / seq_o:>10.1f}")
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
