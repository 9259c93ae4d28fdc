"""Benchmark of the escape-room yardstick (plain script: ``python tests/benchmarks/bench_yardstick.py``).

Scores the shipped reference logs (1,765 + 21 games) ``--repeat`` times and prints, per phase, the best wall
time and the CPU time of that repeat: reading the logs into round-by-round traces, scoring every decision
(expected value of each legal action, regret, protective flag), the per-cell summary with ``--resamples``
cluster-bootstrap intervals, and the Monte Carlo check of ``--mc-decisions`` decisions. Every repeat starts
cold (the model's caches live in one scoring call). No pass/fail threshold; the load average is printed
with the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.reference_data import reference_dir  # noqa: E402
from analysis.yardstick.model import MODEL_VERSION  # noqa: E402
from analysis.yardstick.pipeline import decisions_table, load  # noqa: E402
from analysis.yardstick.summary import summarise, validate  # noqa: E402

T = TypeVar("T")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--mc-decisions", type=int, default=200)
    parser.add_argument("--mc-sims", type=int, default=20_000)
    parser.add_argument("--variant", choices=("team", "self_reliant"), default="team")
    args = parser.parse_args()
    root = reference_dir()
    best: dict[str, tuple[float, float]] = {}  # phase -> (wall, cpu) of its fastest repeat
    load_before = os.getloadavg()

    def timed(phase: str, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        t, c = time.perf_counter(), time.process_time()
        out = work(*args, **kwargs)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if phase not in best or wall < best[phase][0]:
            best[phase] = (wall, cpu)
        return out

    for _ in range(args.repeat):
        loaded = timed("load", load, [root])
        decisions, checks = timed(
            "score", decisions_table, loaded.runs, prior=(1.0, 1.0), variant=args.variant
        )
        summary = timed("summary", summarise, decisions, n_resamples=args.resamples)
        timed("monte_carlo", validate, decisions, checks, n_decisions=args.mc_decisions, n_sims=args.mc_sims)
    games = sum(len(r.games) for r in loaded.runs)

    def fmt(phase: str) -> str:
        wall, cpu = best[phase]
        return f"{wall:.2f} s (cpu {cpu:.2f} s)"

    print(
        f"yardstick {MODEL_VERSION} ({args.variant}) on the reference logs: {games} games, {len(decisions)} decisions, "
        f"{len(summary)} cells"
    )
    print(
        f"best of {args.repeat}: load logs {fmt('load')} | score {fmt('score')} "
        f"({games / best['score'][0]:.0f} games/s) | summary ({args.resamples} resamples) {fmt('summary')} | "
        f"Monte Carlo check ({args.mc_decisions} decisions x {args.mc_sims} sims) {fmt('monte_carlo')}"
    )
    print(
        "load average before: "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + " | after: "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )


if __name__ == "__main__":
    main()
