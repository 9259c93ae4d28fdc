"""Decision throughput of trustsim's LLM client vs bare ``litellm.acompletion`` (same concurrency).

A fake OpenAI-compatible server (separate process, fixed latency) answers every request. For each
concurrency level, both paths send N distinct requests and we report requests/second, the ratio
trustsim / bare, and the speed-up over the sequential (concurrency 1) rate. trustsim's path includes the
request store (SQLite, a fresh file per level, so nothing is a cache hit) and parsing the answer; the
agent path is the whole decision (LLM agents build their prompts, call the client, parse, remember).

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

import numpy as np

from agents.escape_room.base import Services
from agents.escape_room.llm_agent import LLMAgent
from agents.escape_room.llm_parse import parse_decision
from games.escape_room.types import CapsuleView, Observation, Puzzle
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


def observation(seat: str, game: int) -> Observation:
    caps = {k: (CapsuleView(f"Q{k}-{'ABCD'[k - 1]}", ("ABCD"[k - 1],)),) for k in range(1, 5)}
    return Observation(
        seat=seat,
        game=game,
        round=1,
        max_rounds=4,
        puzzle=Puzzle(1, "What is 2 + 3?", 5),
        coins=dict.fromkeys("ABCD", 4),
        alive=tuple("ABCD"),
        capsules=caps,
        owners={1: "A", 2: "B", 3: "C", 4: "D"},
        history=(),
    )


async def agents(api_base: str, n: int, conc: int, tag: str, store: Path) -> float:
    """The whole decision path: LLM agents build prompts, call the client, parse and remember."""
    os.environ["BENCH_FAKE_KEY"] = "not-a-key"
    model = {
        "name": f"fake-{tag}",
        "litellm_model": "openai/fake-model",
        "api_base": api_base,
        "api_key_env": "BENCH_FAKE_KEY",
    }
    client = build_client(model, {"store_path": str(store), "max_concurrency": conc, "timeout_s": 30})
    players = []
    for i in range(n):
        agent = LLMAgent(memory="transcript")
        agent.start_session(
            "A", np.random.default_rng(i), Services(llm=client, model=model, game={"coins": 4})
        )
        agent.start_game(observation("A", i + 1))
        players.append(agent)
    start = time.perf_counter()
    decisions = await asyncio.gather(*(p.adecide(observation("A", i + 1)) for i, p in enumerate(players)))
    rate = n / (time.perf_counter() - start)
    assert all(d.action is not None for d in decisions) and client.stats()["calls_sent"] == n
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
        results: dict[int, tuple[float, float, float]] = {}
        for conc in levels:
            n = max(16, conc * 4)
            b_best = o_best = a_best = 0.0
            for rep in range(args.reps):  # interleaved, best of reps (noise on a shared machine)
                tag = f"{conc}-{rep}"
                b_best = max(b_best, asyncio.run(bare(api_base, n, conc, f"b{tag}")))
                o_best = max(o_best, asyncio.run(ours(api_base, n, conc, f"o{tag}", tmp / f"s{tag}.db")))
                a_best = max(a_best, asyncio.run(agents(api_base, n, conc, f"a{tag}", tmp / f"a{tag}.db")))
            results[conc] = (b_best, o_best, a_best)
        seq_b, seq_o, seq_a = results.get(1, (float("nan"),) * 3)
        print(
            f"fake server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} cores, best of {args.reps}"
        )
        print(
            f"{'conc':>5} {'bare req/s':>11} {'client req/s':>13} {'agent dec/s':>12} {'client/bare':>12} "
            f"{'agent/bare':>11} {'bare xseq':>10} {'client xseq':>12} {'agent xseq':>11}"
        )
        for conc, (b, o, a) in results.items():
            print(
                f"{conc:>5} {b:>11.1f} {o:>13.1f} {a:>12.1f} {o / b:>12.2f} {a / b:>11.2f} "
                f"{b / seq_b:>10.1f} {o / seq_o:>12.1f} {a / seq_a:>11.1f}"
            )
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
