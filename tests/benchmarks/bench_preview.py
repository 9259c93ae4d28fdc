"""Benchmark: how long a preview takes, and what it says, for the issue's sweep.

Run: ``python tests/benchmarks/bench_preview.py [--seeds 5] [--model gpt-5.1]``. Previews
``-m +experiment=smooth,1strike model=<model> seed='range(<seeds>)'`` in-process (no key, nothing sent), job
by job, and prints per job and in total: requests (lower–upper), prompt tokens, cost range, and the wall time
(the first job includes importing litellm). Also prints the load average: the figures are noisy on a shared
machine.
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
from trustsim.preview import Estimate, estimate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--model", default="gpt-5.1")
    args = parser.parse_args()
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ.pop(var, None)  # a preview needs no key
    total: Estimate | None = None
    first, first_requests = 0.0, 0  # the first job (it imports litellm and loads the tokenizer)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = f"llm.store_path={Path(tmp) / 'absent.sqlite'}"  # nothing stored: every request counts
        for experiment in ("smooth", "1strike"):
            for seed in range(args.seeds):
                cfg = compose_config(
                    [f"+experiment={experiment}", f"model={args.model}", f"seed={seed}", store]
                )
                t0 = time.perf_counter()
                est = estimate(cfg)
                wall = time.perf_counter() - t0
                if not first:
                    first, first_requests = wall, est.requests
                total = est if total is None else total + est
                print(
                    f"{experiment:8s} seed={seed}: requests {est.requests_low}-{est.requests}, prompt tokens "
                    f"{est.prompt_tokens:,}, cost ${est.cost_low:.2f}-${est.cost_high:.2f}, {wall:.2f} s"
                )
    wall = time.perf_counter() - start
    assert total is not None
    rest = wall - first
    print(
        f"total {total.jobs} jobs: requests {total.requests_low}-{total.requests}, prompt tokens "
        f"{total.prompt_tokens:,}, cost ${total.cost_low:.2f}-${total.cost_high:.2f}; wall {wall:.1f} s "
        f"(first job {first:.1f} s incl. the litellm import; then {rest / max(total.jobs - 1, 1):.2f} s per job, "
        f"{(total.requests - first_requests) / max(rest, 1e-9):.0f} requests/s); "
        f"load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
