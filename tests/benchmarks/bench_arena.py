"""Benchmark: scripted round-robin tournament of every scripted arena player, 200 rounds x 10 seeds.

Run: ``python tests/benchmarks/bench_arena.py [--runs 10] [--rounds 200] [--repeat 3]``. Prints matches/s
for the full job (Mesa model in the loop, events.jsonl + moves/matches/predictions tables written), by wall
time and by this process's CPU time (steadier on a loaded machine), best of ``--repeat``, and for the bare
model loop (no recording), so the recording share is visible. The load average is printed first.
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
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.conftest import compose_config  # noqa: E402
from trustsim.job import run_job  # noqa: E402


def full_job(runs: int, rounds: int) -> tuple[float, float, int, int]:
    """(wall s, CPU s of this process, matches, run-directory bytes) of one tournament job."""
    cfg = compose_config(
        ["+experiment=ipd_tournament", f"runs={runs}", f"game.rounds={rounds}", "progress=false"]
    )
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        assert run_job(cfg, Path(tmp)) == 0
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        matches = sum(1 for _ in (Path(tmp) / "matches.csv").open()) - 1
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return elapsed, cpu, matches, size


def bare_loop(runs: int, rounds: int) -> tuple[float, int]:
    from agents.arena.scripted import SCRIPTED
    from games.arena.model import ArenaModel
    from games.arena.rules import Payoffs
    from trustsim.horizon import Horizon

    n = len(SCRIPTED)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    start = time.process_time()
    for seed in range(runs):
        for k, (i, j) in enumerate(pairs):
            m = ArenaModel(
                seed=seed * 1000 + k,
                players=(SCRIPTED[i](), SCRIPTED[j]()),
                payoffs=Payoffs(),
                horizon=Horizon(rounds),
            )
            m.play()
    return time.process_time() - start, runs * len(pairs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="seeds (replicate tournaments)")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many jobs")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    full_job(1, 5)  # warm imports
    runs = [full_job(args.runs, args.rounds) for _ in range(args.repeat)]
    elapsed, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
    matches, size = runs[0][2], runs[0][3]
    print(
        f"full job: {matches} matches x {args.rounds} rounds in {elapsed:.2f} s = {matches / elapsed:.1f} matches/s "
        f"wall, {matches / cpu:.1f} matches/s of CPU time ({matches * args.rounds / elapsed:,.0f} rounds/s; "
        f"run directory {size / 1e6:.1f} MB)"
    )
    elapsed, matches = min(bare_loop(args.runs, args.rounds) for _ in range(args.repeat))
    print(f"model loop only: {matches} matches in {elapsed:.2f} s of CPU = {matches / elapsed:.1f} matches/s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
