"""Benchmark: build + solve + export the whole reliance library; the oracle over every scenario via the engine.

Run: ``python tests/benchmarks/bench_reliance.py [--repeat 5] [--threads 1]``. Prints, for the best and the
median of ``--repeat`` runs, the wall time of (1) loading + validating every blueprint/scenario file,
expanding and solving every scenario exactly (all reachable nodes), deriving pairs and the support set, and
(2) the JSONL tree export; nodes/s and branches/s; then the wall time of the oracle agent playing every main
and specialised scenario through the engine (Hydra config, Mesa model, events.jsonl and tables written).
``--threads`` caps BLAS threads (the solver's matrices are tiny; extra threads only add contention).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0 = library default)")
    args = parser.parse_args()
    if args.threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)

    from games.reliance.export import export_library
    from games.reliance.library import build_library, quality_gates
    from tests.conftest import compose_config
    from trustsim.job import run_job

    solve_times, export_times, cpu_times = [], [], []
    lib = None
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            c0 = time.process_time()
            t0 = time.perf_counter()
            lib = build_library()
            t1 = time.perf_counter()
            lines = export_library(lib.solutions.values(), Path(tmp) / "trees.jsonl")
            t2 = time.perf_counter()
            cpu_times.append(time.process_time() - c0)
            solve_times.append(t1 - t0)
            export_times.append(t2 - t1)
        size_mb = (Path(tmp) / "trees.jsonl").stat().st_size / 1e6
    assert lib is not None
    counts = quality_gates(lib)["counts"]
    nodes, branches = counts["decision_nodes"], counts["feedback_branches"]
    total = [s + e for s, e in zip(solve_times, export_times, strict=True)]
    print(
        f"library: {len(lib.solutions)} scenarios ({counts['main']} main, {counts['specialised']} specialised, "
        f"{len(lib.fixtures)} fixtures), {nodes} decision nodes, {branches} feedback branches"
    )
    for label, xs in (("build+solve", solve_times), ("export", export_times), ("build+solve+export", total)):
        print(f"  {label:<19} best {min(xs):.3f} s  median {statistics.median(xs):.3f} s")
    print(
        f"  {'CPU time (all)':<19} best {min(cpu_times):.3f} s  median {statistics.median(cpu_times):.3f} s"
    )
    print(
        f"  load average during the run: {os.getloadavg()[0]:.1f} (wall times inflate when the cores are shared)"
    )
    best = min(total)
    print(
        f"  throughput (best build+solve+export): {nodes / best:,.0f} nodes/s, {branches / best:,.0f} branches/s"
    )
    print(f"  export: {lines} JSONL lines, {size_mb:.1f} MB")

    build_library.__globals__["default_library"].cache_clear()
    cfg = compose_config(["+experiment=reliance", "game.set=all", "progress=false"])
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        c0 = time.process_time()
        assert run_job(cfg, Path(tmp) / "run") == 0
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        decisions = sum(1 for _ in (Path(tmp) / "run" / "stages.csv").open()) - 1
    print(
        f"oracle through the engine: {counts['main'] + counts['specialised']} scenarios, {decisions} decisions "
        f"in {wall:.2f} s wall, {cpu:.2f} s CPU ({decisions / wall:,.0f} decisions/s; includes building the library once)"
    )


if __name__ == "__main__":
    main()
