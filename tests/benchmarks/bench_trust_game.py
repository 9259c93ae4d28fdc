"""Benchmark: scripted one-shot trust-game pairs per second, full job (run directory written).

Run: ``python tests/benchmarks/bench_trust_game.py [--pairs 1000] [--runs 20] [--agent tg_human] [--repeat 3]``.
Prints pairs/s (wall, and by this process's CPU time, steadier on a loaded machine; best of ``--repeat``) for the
full job (config validation, Mesa model in the loop, events.jsonl + exchanges/predictions
tables written, manifest) and for the bare model loop (no recording), and the peak traced memory of a
second, smaller job so growth with the number of pairs is visible.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.conftest import compose_config  # noqa: E402
from trustsim.job import run_job  # noqa: E402


def full_job(agent: str, pairs: int, runs: int) -> tuple[float, float, int, int]:
    """(wall s, CPU s of this process, exchanges, run-directory bytes) of one job."""
    cfg = compose_config(
        ["+experiment=trust_game", f"agent={agent}", f"game.pairs={pairs}", f"runs={runs}", "progress=false"]
    )
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        assert run_job(cfg, Path(tmp)) == 0
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        rows = sum(1 for _ in (Path(tmp) / "exchanges.csv").open()) - 1
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return elapsed, cpu, rows, size


def bare_loop(agent: str, pairs: int, runs: int) -> tuple[float, int]:
    from agents.trust_game.scripted import SCRIPTED
    from games.trust_game.model import TrustGameModel
    from games.trust_game.rules import Stakes
    from trustsim.horizon import Horizon

    cls = next(c for c in SCRIPTED if c.name == agent)
    start = time.process_time()
    for seed in range(runs):
        TrustGameModel(
            seed=seed,
            players=[(cls(), cls()) for _ in range(pairs)],
            stakes=Stakes(),
            horizon=Horizon(1),
        ).play()
    return time.process_time() - start, runs * pairs


def peak_memory(agent: str, pairs: int, runs: int) -> float:
    tracemalloc.start()
    full_job(agent, pairs, runs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000, help="pairs per session")
    ap.add_argument("--runs", type=int, default=20, help="sessions per job")
    ap.add_argument("--agent", default="tg_human", help="scripted agent for both roles")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many jobs")
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    full_job(args.agent, 10, 1)  # warm-up: imports, config composition
    jobs = [full_job(args.agent, args.pairs, args.runs) for _ in range(args.repeat)]
    elapsed, cpu = min(j[0] for j in jobs), min(j[1] for j in jobs)
    rows, size = jobs[0][2], jobs[0][3]
    print(
        f"full job ({args.agent}): {rows} one-shot pairs in {elapsed:.2f} s = {rows / elapsed:,.0f} pairs/s wall, "
        f"{rows / cpu:,.0f} pairs/s of CPU time (run directory {size / 1e6:.1f} MB)"
    )
    elapsed, n = min(bare_loop(args.agent, args.pairs, args.runs) for _ in range(args.repeat))
    print(f"model loop only: {n} pairs in {elapsed:.2f} s of CPU = {n / elapsed:,.0f} pairs/s")
    if args.no_memory:
        return
    small = peak_memory(args.agent, args.pairs, max(1, args.runs // 4))
    large = peak_memory(args.agent, args.pairs, args.runs)
    print(
        f"peak traced memory: {small:.1f} MiB at {args.runs // 4 or 1} sessions, {large:.1f} MiB at {args.runs}"
    )


if __name__ == "__main__":
    main()
