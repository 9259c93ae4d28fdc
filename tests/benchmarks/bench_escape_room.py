"""Benchmark: escape-room games per second with scripted agents, full run directory written, one process.

Run: ``python tests/benchmarks/bench_escape_room.py [--runs 1001] [--repeat 3] [--agents bayes,...] [--per-game 15]``.

Method (issue 16): the whole job (config validation, manifest, Mesa model in the loop, events.jsonl and
every table written) of ``runs`` 11-game mid2strike sessions, minus the same job with ``runs=1``, which takes
process-level start-up out; best of ``--repeat``. Prints games/s per agent, where the time goes (cProfile
of the bayes job grouped by component: recording / interpreter+asyncio / game loop / agents / rules / Mesa),
and peak traced memory at two sizes to show that memory stays flat as games grow. The load average is
printed first: the numbers are only comparable under similar load. On a loaded machine ``--per-game N`` times
each game alone and keeps its best of N identical jobs (``per_game_us``), which other jobs distort far less.
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
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.conftest import compose_config  # noqa: E402
from trustsim.job import run_job  # noqa: E402

GAMES_PER_SESSION = 11  # mid2strike


def job_seconds(runs: int, agent: str = "bayes") -> tuple[float, float]:
    """(wall, CPU) seconds of one full job of ``runs`` sessions (run directory written in a temporary folder).

    CPU seconds (this process) are less sensitive than wall seconds to other jobs on a loaded machine."""
    cfg = compose_config(["+experiment=mid2strike", f"runs={runs}", f"agent={agent}", "progress=false"])
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        code = run_job(cfg, Path(tmp))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        assert code == 0
    return elapsed, cpu


def games_per_second(runs: int, agent: str, repeat: int) -> tuple[float, float, float, float]:
    """(games/s wall, games/s CPU, best wall seconds at ``runs``, at 1): ``runs`` minus ``runs=1``."""
    big = [job_seconds(runs, agent) for _ in range(repeat)]
    one = [job_seconds(1, agent) for _ in range(repeat)]
    games = (runs - 1) * GAMES_PER_SESSION
    wall_big, wall_one = min(w for w, _ in big), min(w for w, _ in one)
    cpu_big, cpu_one = min(c for _, c in big), min(c for _, c in one)
    return games / (wall_big - wall_one), games / (cpu_big - cpu_one), wall_big, wall_one


def per_game_us(runs: int, agent: str, repeat: int) -> float:
    """Microseconds per game, robust to other jobs on the machine: ``repeat`` identical jobs of ``runs`` sessions,
    each game timed alone (wall time from one finished game to the next: its play and the writing of the
    previous game's rows), the best of the ``repeat`` timings of each game summed (a game takes well under a scheduler slice).
    The first game of each job (it builds the table) is left out."""
    from games.escape_room import job as escape_job

    play = escape_job.SessionRunner.games
    timings: list[float] = []

    async def timed(self: Any, table: Any = None) -> Any:
        last = time.perf_counter()
        async for item in play(self, table):
            now = time.perf_counter()
            timings.append(now - last)
            yield item
            last = now  # the next game's time includes the writing of this game's rows

    cfg = compose_config(["+experiment=mid2strike", f"runs={runs}", f"agent={agent}", "progress=false"])
    best: list[float] = []
    escape_job.SessionRunner.games = timed  # type: ignore[method-assign]
    try:
        for _ in range(repeat):
            timings.clear()
            with tempfile.TemporaryDirectory() as tmp:
                assert run_job(cfg, Path(tmp)) == 0
            best = list(timings) if not best else [min(a, b) for a, b in zip(best, timings, strict=True)]
    finally:
        escape_job.SessionRunner.games = play  # type: ignore[method-assign]
    return sum(best[1:]) / (len(best) - 1) * 1e6


COMPONENTS = (
    ("recording (events + tables)", ("trustsim/rundir/", "/json/", "/csv.py", "escape_room/tables")),
    ("game loop (model + runner)", ("escape_room/model", "escape_room/job", "trustsim/job")),
    ("agents (decisions)", ("agents/",)),
    ("rules + puzzles + types", ("escape_room/rules", "escape_room/puzzles", "escape_room/types")),
    ("mesa (model + agent registry)", ("/mesa/", "trustsim/mesa_base")),
    ("interpreter + asyncio + builtins", ("",)),
)


def component_of(filename: str) -> str:
    for name, needles in COMPONENTS:
        if any(n in filename for n in needles):
            return name
    return COMPONENTS[-1][0]


def profile(runs: int) -> dict[str, float]:
    """Share of profiled time (cProfile tottime) per component, for a bayes job of ``runs`` sessions."""
    cfg = compose_config(["+experiment=mid2strike", f"runs={runs}", "agent=bayes", "progress=false"])
    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        run_job(cfg, Path(tmp))
        prof.disable()
    groups: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, _) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        groups[component_of(filename)] += tottime
    total = sum(groups.values())
    return {k: v / total for k, v in sorted(groups.items(), key=lambda kv: -kv[1])}


def peak_memory(runs: int) -> float:
    """Peak traced memory (MiB) of a bayes job of ``runs`` sessions."""
    gc.collect()
    tracemalloc.start()
    job_seconds(runs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1001, help="11-game sessions of the big job")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many jobs per size")
    parser.add_argument("--agents", default="bayes,always_verify,never_verify")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument(
        "--per-game", type=int, default=0, metavar="REPEAT",
        help="instead: each game timed alone, best of REPEAT identical jobs of --runs sessions (a loaded machine)",
    )  # fmt: skip
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    job_seconds(2)  # warm imports and caches
    if args.per_game:
        for agent in args.agents.split(","):
            us = per_game_us(args.runs, agent, args.per_game)
            print(
                f"{agent:14s} {us:.1f} us/game = {1e6 / us:,.0f} games/s (each game: best of {args.per_game} jobs)"
            )
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    for agent in args.agents.split(","):
        rate, cpu_rate, big, one = games_per_second(args.runs, agent, args.repeat)
        print(
            f"{agent:14s} {(args.runs - 1) * GAMES_PER_SESSION} games: runs={args.runs} {big:.2f} s - runs=1 "
            f"{one:.2f} s = {rate:,.0f} games/s wall ({cpu_rate:,.0f} games/s of CPU time)"
        )
    if not args.no_profile:
        print("time by component (cProfile tottime, bayes):")
        for name, share in profile(max(1, args.runs // 5)).items():
            print(f"  {name:34s} {share:6.1%}")
    if not args.no_memory:
        small, large = peak_memory(50), peak_memory(500)
        print(f"peak traced memory: {small:.1f} MiB at 550 games, {large:.1f} MiB at 5,500 games")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
