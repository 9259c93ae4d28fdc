"""Benchmark: scripted round-robin tournament of every scripted arena player, 200 rounds x 10 seeds.

Run: ``python tests/benchmarks/bench_arena.py [--runs 10] [--rounds 200]``. Prints matches/s for the full
job (Mesa model in the loop, events.jsonl + moves/matches/predictions tables written) and for the bare
model loop (no recording), so the recording share is visible.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar

from tests.conftest import compose_config  # noqa: E402
from trustsim.job import run_job  # noqa: E402


def full_job(runs: int, rounds: int) -> tuple[float, int, int]:
    cfg = compose_config(["+experiment=ipd_tournament", f"runs={runs}", f"game.rounds={rounds}"])
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        assert run_job(cfg, Path(tmp)) == 0
        elapsed = time.perf_counter() - start
        matches = sum(1 for _ in (Path(tmp) / "matches.csv").open()) - 1
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return elapsed, matches, size


def bare_loop(runs: int, rounds: int) -> tuple[float, int]:
    from agents.arena.scripted import SCRIPTED
    from games.arena.model import ArenaModel
    from games.arena.rules import Horizon, Payoffs

    n = len(SCRIPTED)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    start = time.perf_counter()
    for seed in range(runs):
        for k, (i, j) in enumerate(pairs):
            m = ArenaModel(
                seed=seed * 1000 + k,
                players=(SCRIPTED[i](), SCRIPTED[j]()),
                payoffs=Payoffs(),
                horizon=Horizon("announced", rounds),
            )
            m.play()
    return time.perf_counter() - start, runs * len(pairs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="seeds (replicate tournaments)")
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    elapsed, matches, size = full_job(args.runs, args.rounds)
    print(
        f"full job: {matches} matches x {args.rounds} rounds in {elapsed:.2f} s = {matches / elapsed:.1f} matches/s "
        f"({matches * args.rounds / elapsed:,.0f} rounds/s; run directory {size / 1e6:.1f} MB)"
    )
    elapsed, matches = bare_loop(args.runs, args.rounds)
    print(f"model loop only: {matches} matches in {elapsed:.2f} s = {matches / elapsed:.1f} matches/s")


if __name__ == "__main__":
    main()
