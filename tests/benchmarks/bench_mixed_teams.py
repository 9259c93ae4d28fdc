"""Benchmark of mixed teams (plain script: ``python tests/benchmarks/bench_mixed_teams.py``).

1. Escape-room throughput (offline agents, one process, in-process jobs): the default team (``agent=bayes``)
   against a mixed team of the same size (``game.seats.B.agent=consensus game.seats.C.agent=always_verify``):
   per-seat planning must cost nothing measurable.
2. LLM path: a mixed team against two fake OpenAI-compatible servers on 127.0.0.1 (two clients sharing one
   request store) against the same team on one server (one client): wall time of a first run and of a
   replay (0 requests).
3. The per-seat measures (``analysis/escape_room/seats.py``: verification by verifier × target, outcomes by
   player) on the shared reference logs (1,786 games) with 5,000 resamples.

Prints numbers and the load average; no pass/fail threshold.
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
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SHARED = Path(os.environ.get("TRUSTSIM_SHARED", REPO.parent / "shared"))
LOGS = SHARED / "data" / "escape-room-v2"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(overrides: list[str], run_dir: Path) -> float:
    from trustsim import api

    t = time.perf_counter()
    result = api.run(None, [*overrides, "progress=false"], run_dir)
    if result.exit_code != 0:
        raise SystemExit(f"run failed ({result.exit_code}): {overrides}")
    return time.perf_counter() - t


def scripted(work: Path, runs: int, repeats: int) -> None:
    base = ["+experiment=mid2strike", "agent=bayes", f"runs={runs}"]
    variants = {
        "default team (bayes x3)": base,
        "mixed team (bayes, consensus, always_verify)": [
            *base,
            "game.seats.B.agent=consensus",
            "game.seats.C.agent=always_verify",
        ],
    }
    games = runs * 11
    run([*base[:2], "runs=1"], work / "warmup")  # imports and first-call costs, untimed
    for label, over in variants.items():
        times = sorted(run(over, work / f"{label[:5]}_{i}") for i in range(repeats))
        print(
            f"[1] {label}: {games} games, median {times[len(times) // 2]:.2f} s ({games / times[len(times) // 2]:.0f} games/s)"
        )


def llm(work: Path) -> None:
    import litellm  # noqa: F401 - imported before timing (the first import takes seconds)

    from trustsim.llm.fake_server import FakeServer

    os.environ["BENCH_TEAM_KEY"] = "sk-bench-team-0123456789abcdef"

    def model(name: str, server: FakeServer) -> str:
        return f"{{name: {name}, litellm_model: openai/{name}, api_base: '{server.api_base}', api_key_env: BENCH_TEAM_KEY}}"

    with FakeServer() as one, FakeServer() as two:
        job = [
            "+experiment=mid2strike",
            "agent=llm",
            "model=openai_compatible",
            "model.name=model-one",
            "model.litellm_model=openai/model-one",
            f"model.api_base={one.api_base}",
            "model.api_key_env=BENCH_TEAM_KEY",
            "game.games=3",
            "runs=2",
        ]
        run([*job, "game.games=1", "runs=1", f"llm.store_path={work / 'warm.sqlite'}"], work / "llm_warm")
        for label, extra in {
            "one server, one client": [],
            "two servers, two clients": [f"game.seats.C.model={model('model-two', two)}"],
        }.items():
            store = work / f"store_{len(extra)}.sqlite"
            before = len(one.requests) + len(two.requests)
            first = run([*job, *extra, f"llm.store_path={store}"], work / f"llm_{len(extra)}_a")
            sent = len(one.requests) + len(two.requests) - before
            replay = run([*job, *extra, f"llm.store_path={store}"], work / f"llm_{len(extra)}_b")
            print(f"[2] {label}: first run {first:.2f} s ({sent} requests), replay {replay:.2f} s")


def analysis() -> None:
    from analysis.escape_room.loader import load_trust_data
    from analysis.escape_room.seats import seat_outcomes, seat_verification

    if not LOGS.is_dir():
        print(f"[3] skipped: no reference logs at {LOGS}")
        return
    data = load_trust_data([LOGS])
    t = time.perf_counter()
    table = seat_verification(data, n_resamples=5000)
    mid = time.perf_counter()
    seat_outcomes(data)
    end = time.perf_counter()
    print(
        f"[3] reference logs: {data.n_games} games, {len(data.decisions)} decisions | seat_verification "
        f"{mid - t:.2f} s ({len(table)} rows), seat_outcomes {end - mid:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="sessions per scripted job (11 games each)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(load())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        scripted(work, args.runs, args.repeats)
        llm(work)
    analysis()
    print(load())


if __name__ == "__main__":
    main()
