"""Benchmark: escape-room games per second with scripted agents, full run directory written, one process.

Run: ``python tests/benchmarks/bench_escape_room.py [--runs N]``. Prints games/s for 11-game mid2strike sessions
of ``bayes`` agents (Mesa model in the loop, events + tables streamed to disk), where the time goes (cProfile
grouped by component), and peak traced memory at two sizes to show memory stays flat as games grow.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar

from tests.conftest import compose_config  # noqa: E402
from trustsim.job import run_job  # noqa: E402


def run(runs: int, agent: str = "bayes") -> tuple[float, int]:
    cfg = compose_config(["+experiment=mid2strike", f"runs={runs}", f"agent={agent}"])
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        code = run_job(cfg, Path(tmp))
        elapsed = time.perf_counter() - start
        assert code == 0
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return elapsed, size


def components(runs: int) -> dict[str, float]:
    cfg = compose_config(["+experiment=mid2strike", f"runs={runs}", "agent=bayes"])
    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        run_job(cfg, Path(tmp))
        prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    groups: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, _) in stats.items():
        if "/mesa/" in filename:
            key = "mesa (model + agent registry)"
        elif "escape_room/rules" in filename or "escape_room/puzzles" in filename:
            key = "rules + puzzles"
        elif "agents/" in filename:
            key = "agents (decisions)"
        elif "rundir/" in filename or "json" in filename or "csv" in filename or "tables" in filename:
            key = "recording (events + tables)"
        elif "escape_room/model" in filename or "escape_room/job" in filename:
            key = "game loop"
        else:
            key = "other (asyncio, builtins, ...)"
        groups[key] += tottime
    total = sum(groups.values())
    return {k: v / total for k, v in sorted(groups.items(), key=lambda kv: -kv[1])}


def peak_memory(runs: int) -> float:
    gc.collect()
    tracemalloc.start()
    run(runs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300, help="11-game sessions per measurement")
    args = parser.parse_args()
    run(5)  # warm imports
    for agent in ("bayes", "always_verify", "never_verify"):
        best = min(run(args.runs, agent)[0] for _ in range(3))
        games = args.runs * 11
        print(f"{agent:14s} {games} games in {best:.2f} s = {games / best:,.0f} games/s")
    print("time by component (bayes):")
    for name, share in components(args.runs // 3).items():
        print(f"  {name:32s} {share:6.1%}")
    small, large = peak_memory(50), peak_memory(500)
    print(f"peak traced memory: {small:.1f} MiB at 550 games, {large:.1f} MiB at 5,500 games")


if __name__ == "__main__":
    main()
