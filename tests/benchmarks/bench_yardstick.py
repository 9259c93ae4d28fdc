"""Benchmark of the escape-room yardstick (plain script: ``python tests/benchmarks/bench_yardstick.py``).

Scores the shipped reference logs (1,765 + 21 games) ``--repeat`` times and prints, per phase, the best wall
time: reading the logs into round-by-round traces, scoring every decision (expected value of each legal
action, regret, protective flag), the per-cell summary with ``--resamples`` cluster-bootstrap intervals, and
the Monte Carlo check of ``--mc-decisions`` decisions. The model's value cache is cleared before every
repeat, so each one starts cold. No pass/fail threshold; the load average is printed with the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.reference_data import reference_dir  # noqa: E402
from analysis.yardstick import model  # noqa: E402
from analysis.yardstick.pipeline import decisions_table, load  # noqa: E402
from analysis.yardstick.summary import summarise, validate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--mc-decisions", type=int, default=200)
    parser.add_argument("--mc-sims", type=int, default=20_000)
    args = parser.parse_args()
    root = reference_dir()
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        model._value.cache_clear()
        model._verify.cache_clear()
        t = time.perf_counter()
        loaded = load([root])
        phases = {"load": time.perf_counter() - t}
        t = time.perf_counter()
        decisions, states = decisions_table(loaded.runs, prior=(1.0, 1.0), variant="team")
        phases["score"] = time.perf_counter() - t
        t = time.perf_counter()
        summary = summarise(decisions, n_resamples=args.resamples)
        phases["summary"] = time.perf_counter() - t
        t = time.perf_counter()
        validate(decisions, states, n_decisions=args.mc_decisions, n_sims=args.mc_sims)
        phases["monte_carlo"] = time.perf_counter() - t
        for key, value in phases.items():
            best[key] = min(best.get(key, value), value)
    games = sum(len(r.games) for r in loaded.runs)
    load_avg = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"yardstick on the reference logs: {games} games, {len(decisions)} decisions, {len(summary)} cells")
    print(
        f"best of {args.repeat}: load logs {best['load']:.2f} s | score {best['score']:.2f} s "
        f"({games / best['score']:.0f} games/s) | summary ({args.resamples} resamples) {best['summary']:.2f} s | "
        f"Monte Carlo check ({args.mc_decisions} decisions x {args.mc_sims} sims) {best['monte_carlo']:.2f} s | "
        f"load+score {best['load'] + best['score']:.2f} s"
    )
    print(f"load average: {load_avg}")


if __name__ == "__main__":
    main()
