"""Do CPU-bound scripted jobs slow the LLM jobs of the same trustsim-launcher sweep?

Six LLM jobs (2 games each, ``agent.prompt=trustsim``) against the loopback server (0.3 s per answer), alone
and beside ``--scripted`` scripted jobs (``agent=bayes``, ``runs=--runs`` 11-game sessions: seconds of CPU
each), alternating, ``--repeats`` times each. The launcher runs scripted jobs one at a time on a private
loop in their own thread (:mod:`trustsim.launch`), so their CPU competes with the LLM jobs' only for the
interpreter, never for their event loop. Prints each sweep's wall and CPU time and the LLM jobs' wall times
(their manifests' ``timings.wall_s``). The first sweep includes the imports' warm-up.

    python tests/benchmarks/bench_sweep_mixed.py [--scripted 2] [--runs 400] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CI", "true")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.sweep.helpers import KEY, KEY_ENV, job, llm_overrides, reply  # noqa: E402 - after the path
from trustsim.launch import run_jobs  # noqa: E402
from trustsim.llm.fake_server import FakeServer  # noqa: E402

SCHEDULES = ("smooth", "1strike", "2strike", "3strike", "mid2strike", "recur")


def sweep(scripted: int, runs: int, root: Path) -> str:
    with FakeServer(reply=reply, delay_s=0.3) as srv:
        jobs = [
            job(
                i,
                [f"+experiment={e}", *llm_overrides(srv, root / "s.sqlite", "game.games=2", f"seed={i}")],
                root,
            )
            for i, e in enumerate(SCHEDULES)
        ]
        jobs += [
            job(10 + k, ["+experiment=mid2strike", "agent=bayes", f"runs={runs}", f"seed={k}"], root)
            for k in range(scripted)
        ]
        wall, cpu = time.perf_counter(), time.process_time()
        codes = run_jobs(jobs, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    llm = [
        json.loads((root / f"{i:03d}" / "manifest.json").read_text())["timings"]["wall_s"] for i in range(6)
    ]
    return (
        f"scripted jobs {scripted}: exit codes {set(codes)}; sweep {wall:.1f} s wall, {cpu:.1f} s CPU; LLM jobs "
        f"{min(llm):.1f}–{max(llm):.1f} s wall (mean {sum(llm) / len(llm):.2f}); load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripted", type=int, default=2)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    tmp = Path(tempfile.mkdtemp(prefix="trustsim-bench-mixed-"))
    for n, scripted in enumerate([0, args.scripted] * args.repeats):
        print(sweep(scripted, args.runs, tmp / str(n)), flush=True)


if __name__ == "__main__":
    main()
