"""Wall time of the trust-card smoke battery on the embedded model (issue 14: <= 3 minutes), its replay and
the card built from it. One command, prints the numbers (and the load average, since the machine is shared):

    .venv/bin/python tests/benchmarks/bench_card_smoke.py [--model smollm2] [--size smoke] [--keep DIR] [OVERRIDE...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, check=False,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    return time.perf_counter() - start, proc


def _calls(sweep: Path) -> tuple[int, int]:
    llm = [json.loads(p.read_text()).get("llm") or {} for p in sweep.glob("*/manifest.json")]
    return sum(x.get("calls_sent", 0) for x in llm), sum(x.get("cache_hits", 0) for x in llm)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--size", default="smoke")
    parser.add_argument("--keep", type=Path, help="keep the sweeps, store and card here")
    parser.add_argument(
        "overrides", nargs="*", help="extra overrides, e.g. model.local.n_threads=1 (busy machine)"
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-card-"))
    root.mkdir(parents=True, exist_ok=True)
    store = root / "store.sqlite"
    common = ["-m", "trustsim", "-m", "+experiment=trustcard", f"model={args.model}", f"card.size={args.size}",
              f"llm.store_path={store}", "progress=false", *args.overrides]  # fmt: skip
    print(f"load average before: {os.getloadavg()}")
    for label, sweep in (("battery (empty store)", root / "first"), ("re-run (replay)", root / "again")):
        wall, proc = _run([*common, f"hydra.sweep.dir={sweep}"])
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        sent, cached = _calls(sweep)
        print(f"{label}: {wall:.1f} s wall, {sent} LLM calls sent, {cached} replayed; load {os.getloadavg()}")
    wall, proc = _run(["-m", "analysis", "card", str(root / "first"), "--out", str(root / "card")])
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return 1
    print(f"card (HTML, cards.csv, compare.html, PNG, PDF): {wall:.1f} s wall; load {os.getloadavg()}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
