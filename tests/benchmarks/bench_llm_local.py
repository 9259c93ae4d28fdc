"""The default experiment with the embedded model, then its replay from the request store.

Runs ``python -m trustsim +experiment=mid2strike agent=llm model=smollm2`` with a fresh request store and
reports wall time, decisions, time per decision, calls, tokens, validity; then runs the same command again
(every response replayed from the store) and reports its wall time as a fraction of the original.

    python tests/benchmarks/bench_llm_local.py [extra hydra overrides...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]


def _mean_latency(run_dir: Path) -> float:
    """Mean latency of the LLM decisions (tables hold no latency: it is in events.jsonl)."""
    lat = [
        e["latency_s"]
        for e in map(json.loads, (run_dir / "events.jsonl").open())
        if e.get("type") == "decision" and "latency_s" in e
    ]
    return sum(lat) / max(len(lat), 1)


def run(tmp: Path, name: str, extra: list[str]) -> tuple[float, Path]:
    run_dir = tmp / name
    cmd = [
        sys.executable,
        "-m",
        "trustsim",
        "+experiment=mid2strike",
        "agent=llm",
        "model=smollm2",
        f"llm.store_path={tmp / 'store.sqlite'}",
        f"hydra.run.dir={run_dir}",
        *extra,
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "CI": "true"}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return wall, run_dir


def main() -> None:
    extra = sys.argv[1:]
    tmp = Path(tempfile.mkdtemp(prefix="bench_llm_local_"))
    wall, run_dir = run(tmp, "original", extra)
    m = json.loads((run_dir / "manifest.json").read_text())
    d = pd.read_csv(run_dir / "decisions.csv")
    llm = d[d.seat != "D"]
    n = len(llm)
    print(f"cores: {os.cpu_count()}  overrides: {' '.join(extra) or '-'}")
    print(
        f"original run: wall {wall:.1f} s (job {m['timings']['wall_s']:.1f} s), games {m['counts']['games']}"
    )
    print(
        f"LLM decisions {n}, calls sent {m['llm']['calls_sent']}, "
        f"time per decision {m['timings']['wall_s'] / max(n, 1):.2f} s (job wall / decisions), "
        f"mean call latency {_mean_latency(run_dir):.2f} s"
    )
    print(
        f"tokens: prompt {m['llm']['prompt_tokens']} (mean {llm.prompt_tokens.mean():.0f}/decision), "
        f"completion {m['llm']['completion_tokens']} (mean {llm.completion_tokens.mean():.0f}/decision)"
    )
    reasons = llm.invalid_reason.value_counts().to_dict()
    print(f"actions: {llm.action.value_counts().to_dict()}  not valid: {reasons or 0}")
    replay_wall, replay_dir = run(tmp, "replay", extra)
    m2 = json.loads((replay_dir / "manifest.json").read_text())
    same = all(
        pd.read_csv(run_dir / t)
        .drop(columns=["cached"], errors="ignore")
        .equals(pd.read_csv(replay_dir / t).drop(columns=["cached"], errors="ignore"))
        for t in ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")
    )
    print(
        f"replay: wall {replay_wall:.1f} s (job {m2['timings']['wall_s']:.1f} s) = "
        f"{replay_wall / wall:.3f} of the original; calls sent {m2['llm']['calls_sent']}, "
        f"cache hits {m2['llm']['cache_hits']}, tables identical (except 'cached'): {same}"
    )


if __name__ == "__main__":
    main()
