"""LLM-path throughput: trustsim's client and whole agent decision vs bare ``litellm.acompletion`` and raw HTTP.

A fake OpenAI-compatible server (its own process, fixed latency) answers every request. Each variant runs in
its OWN worker process (imports, garbage collector and connection pools are not shared, as for a user who
runs only that code), and sends N distinct chat requests at a fixed concurrency:

- ``bare``: ``litellm.acompletion`` called directly (plain ``import litellm``, no trustsim code);
- ``httpx``: raw ``httpx.AsyncClient`` posting the same chat-completions JSON (max_connections = concurrency);
- ``aiohttp``: raw ``aiohttp.ClientSession`` (the transport litellm itself uses), connector limit = concurrency;
- ``transport``: trustsim's litellm transport alone (``trustsim.llm.transport.call_litellm``);
- ``client``: ``LLMClient.complete`` (request store, a fresh SQLite file per run so nothing is a cache hit,
  retries, redaction) plus parsing the answer;
- ``agent``: the whole decision: escape-room LLM agents build their prompts, call the client, parse, remember.

Runs are interleaved (every repetition visits every level and every variant, in a rotating order) and the
table shows the MEDIAN of the repetitions, so load from other processes hits all variants alike. Besides
requests/second it reports, robust to load from other processes:

- paired ratios: each repetition's run of a variant divided by the bare run of the SAME repetition and level
  (seconds apart, under the same load), median and [min, max] over the repetitions;
- process CPU milliseconds per request, and the CPU ratio bare ÷ variant (>= 1: the variant needs less CPU per
  request, which is what bounds throughput once the cores are busy), paired and summarised the same way.

One command, prints the numbers::

    python tests/benchmarks/bench_llm_throughput.py [--latency 0.2] [--levels 8,32,64] [--reps 5]

``--levels 1,8,32,64`` adds each variant's speed-up over its own sequential rate.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai/fake-model"
KEY = "not-a-real-key-123"
VARIANTS = ("bare", "httpx", "aiohttp", "transport", "client", "agent")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trustsim.llm.fake_server", "--port", "0", "--delay", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = proc.stdout.readline().strip() if proc.stdout else ""
    if not line.startswith("PORT "):
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


def messages(tag: str, i: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "rules " * 100}, {"role": "user", "content": f"{tag} request {i}"}]


# -- the variants (each runs inside its own worker process) -------------------------------------------------
class Clock:
    """Wall and process CPU time of the timed part of a run (set-up such as building agents is not in it)."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


async def gather_limited(n: int, conc: int, one: Callable[[int], Awaitable[None]]) -> None:
    sem = asyncio.Semaphore(conc)

    async def limited(i: int) -> None:
        async with sem:
            await one(i)

    await asyncio.gather(*(limited(i) for i in range(n)))


async def run_bare(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    import litellm

    async def one(i: int) -> None:
        r = await litellm.acompletion(
            model=MODEL, messages=messages(tag, i), api_base=api_base, api_key=KEY, max_retries=0, timeout=30
        )
        assert r.choices[0].message.content

    clock = Clock()
    await gather_limited(n, conc, one)
    return clock.stop()


async def run_httpx(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    import httpx

    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=api_base, limits=limits, timeout=30, headers=headers) as http:

        async def one(i: int) -> None:
            r = await http.post(
                "/chat/completions", json={"model": "fake-model", "messages": messages(tag, i)}
            )
            r.raise_for_status()
            assert r.json()["choices"][0]["message"]["content"]

        clock = Clock()
        await gather_limited(n, conc, one)
        return clock.stop()


async def run_aiohttp(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    import aiohttp

    headers = {"Authorization": f"Bearer {KEY}"}
    timeout = aiohttp.ClientTimeout(total=30)
    connector = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as http:

        async def one(i: int) -> None:
            body = {"model": "fake-model", "messages": messages(tag, i)}
            async with http.post(f"{api_base}/chat/completions", json=body) as r:
                r.raise_for_status()
                assert (await r.json())["choices"][0]["message"]["content"]

        clock = Clock()
        await gather_limited(n, conc, one)
        return clock.stop()


async def run_transport(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    from trustsim.llm.transport import call_litellm

    async def one(i: int) -> None:
        r = await call_litellm(
            MODEL, messages(tag, i), {}, api_base=api_base, api_key=KEY, timeout_s=30, drop_params=True
        )
        assert r.text

    clock = Clock()
    await gather_limited(n, conc, one)
    return clock.stop()


def _model(api_base: str, tag: str) -> dict[str, str]:
    os.environ["BENCH_FAKE_KEY"] = KEY
    return {
        "name": f"fake-{tag}",
        "litellm_model": MODEL,
        "api_base": api_base,
        "api_key_env": "BENCH_FAKE_KEY",
    }


async def run_client(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    from agents.escape_room.llm_parse import parse_decision
    from trustsim.llm import ChatRequest, build_client, parse_llm_config, parse_model_config

    model = _model(api_base, tag)
    llm = {"store_path": str(work / f"{tag}.db"), "max_concurrency": conc, "timeout_s": 30}
    client = build_client(parse_model_config(model), parse_llm_config(llm))

    async def one(i: int) -> None:
        resp = await client.complete(ChatRequest(model["name"], messages(tag, i)))
        assert parse_decision(resp.text).action is not None

    clock = Clock()
    await asyncio.gather(*(one(i) for i in range(n)))  # the client's own llm.max_concurrency limits
    elapsed = clock.stop()
    assert client.stats()["calls_sent"] == n
    await client.aclose()
    return elapsed


def observation(seat: str, game: int) -> Any:  # imported inside: only the agent worker needs games
    from games.escape_room.types import CapsuleView, Observation, Puzzle

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


async def run_agent(api_base: str, n: int, conc: int, tag: str, work: Path) -> tuple[float, float]:
    """The whole decision path: LLM agents build prompts, call the client, parse and remember."""
    import numpy as np

    from agents.escape_room.base import Services
    from agents.escape_room.llm_agent import LLMAgent
    from games.escape_room.options import EscapeRoomGame
    from trustsim.llm import build_client, parse_llm_config, parse_model_config

    model = _model(api_base, tag)
    llm = {"store_path": str(work / f"{tag}.db"), "max_concurrency": conc, "timeout_s": 30}
    client = build_client(parse_model_config(model), parse_llm_config(llm))
    players = []
    for i in range(n):
        agent = LLMAgent(memory="transcript")
        agent.start_session(
            "A", np.random.default_rng(i), Services(llm=client, model=model, game=EscapeRoomGame(coins=4))
        )
        agent.start_game(observation("A", i + 1))
        players.append(agent)
    observations = [observation("A", i + 1) for i in range(n)]  # the game's work, not the decision's
    clock = Clock()
    decisions = await asyncio.gather(*(p.adecide(o) for p, o in zip(players, observations, strict=True)))
    elapsed = clock.stop()
    assert all(d.action is not None for d in decisions) and client.stats()["calls_sent"] == n
    await client.aclose()
    return elapsed


RUNNERS = {
    "bare": run_bare,
    "httpx": run_httpx,
    "aiohttp": run_aiohttp,
    "transport": run_transport,
    "client": run_client,
    "agent": run_agent,
}


def worker(variant: str, api_base: str) -> None:
    """Serve ``conc n tag`` lines on stdin with ``seconds cpu_seconds`` lines, on one event loop."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if variant in ("transport", "client", "agent"):
        import agents.escape_room.llm_agent  # noqa: F401 (imported before timing, like a job's start)
        import trustsim.llm.transport as transport

        transport.get_litellm()
    elif variant == "bare":
        import litellm  # noqa: F401
    run = RUNNERS[variant]
    work = Path(tempfile.mkdtemp(prefix=f"bench_llm_{variant}_"))
    loop = asyncio.new_event_loop()
    loop.run_until_complete(run(api_base, 8, 8, "warm", work))  # imports, connection pools
    print("READY", flush=True)
    for line in sys.stdin:
        conc, n, tag = line.split()
        seconds, cpu = loop.run_until_complete(run(api_base, int(n), int(conc), tag, work))
        print(f"{seconds} {cpu}", flush=True)
    loop.close()


# -- the driver ---------------------------------------------------------------------------------------------
class Worker:
    def __init__(self, variant: str, api_base: str) -> None:
        self.variant = variant
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", variant, "--api-base", api_base],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )

    def ready(self) -> None:
        line = self.proc.stdout.readline().strip() if self.proc.stdout else ""
        if line != "READY":
            raise RuntimeError(f"{self.variant} worker did not start: {line!r}")

    def run(self, conc: int, n: int, tag: str) -> tuple[float, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{conc} {n} {tag}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        if len(line) != 2:
            raise RuntimeError(f"{self.variant} worker failed at concurrency {conc}")
        seconds, cpu = float(line[0]), float(line[1])
        return n / seconds, 1000.0 * cpu / n

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="fake server delay per answer (s)")
    parser.add_argument("--levels", default="8,32,64", help="concurrency levels")
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (median shown)")
    parser.add_argument(
        "--requests", type=int, default=8, help="requests per run = this x concurrency (>= 32)"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--api-base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.api_base)
        return
    levels = [int(x) for x in args.levels.split(",")]
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or "bare" not in variants:
        parser.error(f"--variants: choose from {','.join(VARIANTS)} (bare is required); got {unknown}")
    load_before = os.getloadavg()
    proc, api_base = start_server(args.latency)
    workers = {v: Worker(v, api_base) for v in variants}
    rates: dict[tuple[int, str], list[float]] = {}
    cpus: dict[tuple[int, str], list[float]] = {}
    try:
        for w in workers.values():
            w.ready()
        for rep in range(args.reps):
            for conc in levels:
                n = max(32, conc * args.requests)
                shift = (rep + levels.index(conc)) % len(variants)
                for v in variants[shift:] + variants[:shift]:  # rotate who goes first
                    rate, cpu = workers[v].run(conc, n, f"{v}-{conc}-{rep}")
                    rates.setdefault((conc, v), []).append(rate)
                    cpus.setdefault((conc, v), []).append(cpu)
    finally:
        for w in workers.values():
            w.close()
        proc.terminate()
        proc.wait(5)
    load_after = os.getloadavg()
    report(args, levels, variants, rates, cpus, load_before, load_after)


def paired(values: dict[tuple[int, str], list[float]], conc: int, v: str, *, invert: bool = False) -> str:
    """Median [min, max] over repetitions of variant ÷ bare (bare ÷ variant with ``invert``), each
    repetition's run against the bare run of the same repetition."""
    pairs = zip(values[conc, v], values[conc, "bare"], strict=True)
    ratios = [b / x if invert else x / b for x, b in pairs]
    return f"{statistics.median(ratios):.2f} [{min(ratios):.2f},{max(ratios):.2f}]"


def print_rates(
    table: dict[tuple[int, str], float], levels: list[int], variants: list[str], others: list[str]
) -> None:
    """One rates table: requests/s per level and variant, then each variant's rate ÷ bare's."""
    print(
        f"{'conc':>5} "
        + " ".join(f"{v + ' /s':>11}" for v in variants)
        + " "
        + " ".join(f"{v + '/bare':>13}" for v in others)
    )
    for conc in levels:
        row = f"{conc:>5} " + " ".join(f"{table[conc, v]:>11.1f}" for v in variants)
        row += " " + " ".join(f"{table[conc, v] / table[conc, 'bare']:>13.2f}" for v in others)
        print(row)


def report(
    args: argparse.Namespace,
    levels: list[int],
    variants: list[str],
    rates: dict[tuple[int, str], list[float]],
    cpus: dict[tuple[int, str], list[float]],
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> None:
    med = {k: statistics.median(v) for k, v in rates.items()}
    pooled = {
        k: statistics.harmonic_mean(v) for k, v in rates.items()
    }  # runs have equal N: total N / total s
    cpu = {k: statistics.fmean(v) for k, v in cpus.items()}
    print(
        f"fake server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} cores, median of {args.reps} "
        f"interleaved runs, load avg {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    others = [v for v in variants if v != "bare"]
    print_rates(med, levels, variants, others)
    if 1 in levels:
        print("speed-up over the sequential rate (concurrency 1) of the same variant:")
        print(f"{'conc':>5} " + " ".join(f"{v + ' xseq':>11}" for v in variants))
        for conc in levels:
            print(f"{conc:>5} " + " ".join(f"{med[conc, v] / med[1, v]:>11.1f}" for v in variants))
    print(
        "pooled over all runs (total requests / total time; includes costs that recur every few hundred calls,"
        " such as a full garbage collection, which a median of short runs can skip):"
    )
    print_rates(pooled, levels, variants, others)
    print(
        "paired ratio to bare (each repetition's run / the bare run of the same repetition and level; "
        "median [min,max] over repetitions):"
    )
    print(f"{'conc':>5} " + " ".join(f"{v + '/bare':>17}" for v in others))
    for conc in levels:
        print(f"{conc:>5} " + " ".join(f"{paired(rates, conc, v):>17}" for v in others))
    print("process CPU ms per request (mean of all runs; lower is better, less affected by load):")
    print(f"{'conc':>5} " + " ".join(f"{v:>11}" for v in variants))
    for conc in levels:
        print(f"{conc:>5} " + " ".join(f"{cpu[conc, v]:>11.2f}" for v in variants))
    print(
        "CPU ratio, bare CPU per request / the variant's (>= 1: less CPU per request, more requests/s once "
        "the cores are busy; paired by repetition, median [min,max]):"
    )
    print(f"{'conc':>5} " + " ".join(f"{'bare/' + v:>17}" for v in others))
    for conc in levels:
        print(f"{conc:>5} " + " ".join(f"{paired(cpus, conc, v, invert=True):>17}" for v in others))


if __name__ == "__main__":
    main()
