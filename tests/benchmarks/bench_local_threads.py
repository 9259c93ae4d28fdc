"""The embedded model's default thread count on a machine that was busy a moment ago, and with a second run.

Two checks, each in one sitting (the default run: ``+experiment=mid2strike seed=11 agent=llm model=smollm2``,
a fresh request store per run; ``--games N`` shortens it for a busy machine):

- ``busy``: a CPU-bound process per core for ``--busy-s`` seconds (as a compile leaves the machine), ended,
  then the default run at once; then the same run with each explicit thread count (1 .. cores, at most 4).
  The default's wall time should be within 1.15 x the best explicit one.
- ``together``: one default run alone, then two started together; the pair should finish within 2.2 x the
  run alone (the processes share the cores: trustsim/llm/cores.py).

Wall and CPU seconds (user + sys of each run's process) are printed with the load average before and after.

    python tests/benchmarks/bench_local_threads.py busy [--games 11] [--busy-s 20]
    python tests/benchmarks/bench_local_threads.py together [--games 11]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from trustsim.llm.threads import MAX_THREADS, usable_cores  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _burn(until: float) -> None:
    while time.monotonic() < until:
        pass


def start_run(tmp: Path, name: str, games: int, extra: list[str]) -> subprocess.Popen[str]:
    cmd = [
        sys.executable,
        "-m",
        "trustsim",
        "+experiment=mid2strike",
        "seed=11",
        "agent=llm",
        "model=smollm2",
        "progress=false",
        f"game.games={games}",
        f"llm.store_path={tmp / f'{name}.sqlite'}",
        f"hydra.run.dir={tmp / name}",
        *extra,
    ]
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(REPO)}
    with (tmp / f"{name}.stderr").open("w") as err:
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)


class Runs:
    """Runs whose CPU seconds are read from their own rusage (wait4), not shared with other children."""

    def __init__(self, games: int) -> None:
        self.games = games
        self.tmp = Path(tempfile.mkdtemp(prefix="bench_local_threads_"))
        self.n = 0

    def start(self, extra: list[str]) -> tuple[subprocess.Popen[str], float]:
        self.n += 1
        return start_run(self.tmp, f"run{self.n}", self.games, extra), time.perf_counter()

    @staticmethod
    def wait(started: tuple[subprocess.Popen[str], float]) -> tuple[float, float]:
        proc, start = started
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(
                f"run failed ({proc.returncode}): {' '.join(map(str, proc.args[2:]))}; see *.stderr"
            )
        return wall, usage.ru_utime + usage.ru_stime

    def one(self, extra: list[str]) -> tuple[float, float]:
        return self.wait(self.start(extra))


def busy(runs: Runs, busy_s: float) -> None:
    cores = usable_cores()
    until = time.monotonic() + busy_s
    burners = [multiprocessing.Process(target=_burn, args=(until,)) for _ in range(cores)]
    for p in burners:
        p.start()
    for p in burners:
        p.join()
    load = _load()
    wall, cpu = runs.one([])
    print(f"default after {cores} busy process(es) for {busy_s:.0f} s: wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"(load {load} -> {_load()})", flush=True)  # fmt: skip
    best = None
    for n in range(1, min(cores, MAX_THREADS) + 1):
        load = _load()
        w, c = runs.one([f"model.local.n_threads={n}"])
        print(f"explicit n_threads={n}: wall {w:.1f} s, CPU {c:.1f} s (load {load} -> {_load()})", flush=True)
        best = w if best is None else min(best, w)
    print(f"default / best explicit wall: {wall / best:.2f} (target <= 1.15)")


def together(runs: Runs) -> None:
    load = _load()
    alone, cpu = runs.one([])
    print(
        f"one default run alone: wall {alone:.1f} s, CPU {cpu:.1f} s (load {load} -> {_load()})", flush=True
    )
    load = _load()
    first, second = runs.start([]), runs.start([])
    (w1, c1), (w2, c2) = runs.wait(first), runs.wait(second)
    print(
        f"two default runs together: walls {w1:.1f} s and {w2:.1f} s, CPU {c1:.1f} s and {c2:.1f} s "
        f"(load {load} -> {_load()})"
    )
    print(f"together / alone wall: {max(w1, w2) / alone:.2f} (target <= 2.2)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("check", choices=("busy", "together"))
    parser.add_argument("--games", type=int, default=11, help="game.games of each run (the preset: 11)")
    parser.add_argument("--busy-s", type=float, default=20.0)
    args = parser.parse_args()
    print(f"cores: {usable_cores()} usable; games per run: {args.games}; load before: {_load()}")
    runs = Runs(args.games)
    if args.check == "busy":
        busy(runs, args.busy_s)
    else:
        together(runs)


if __name__ == "__main__":
    main()
