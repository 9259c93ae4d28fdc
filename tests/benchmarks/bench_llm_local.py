"""The default experiment on the embedded model, then its replay from the request store.

Runs ``python -m trustsim +experiment=mid2strike seed=11`` (agent=llm, model=smollm2: the README quick start)
with a fresh request store and reports wall time, decisions, calls, tokens per call (prompt; reused from
the KV cache, i.e. the reuse rate; evaluated; completion = sampled + forced) and the per-token speeds, with
the load average; then runs the same command again (every response replayed from the store) and reports
its wall time as a fraction of the original.

    python tests/benchmarks/bench_llm_local.py [extra hydra overrides...]
    python tests/benchmarks/bench_llm_local.py model.local.decoder=grammar model.prompt_compact=false  # the old path
    python tests/benchmarks/bench_llm_local.py --reuse-of STORE   # KV reuse the old llama-cpp-python cache
                                                                  # policy would get on a store's prompts

The tokens and the reuse rate do not depend on the machine's load; the seconds do (the embedded model is
very sensitive to other processes on the cores): compare the per-token speeds and the load printed, or the
CPU seconds of a run with ``model.local.n_threads=1`` (close to its wall time on an idle core).
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

CPU: dict[str, float] = {}  # CPU seconds (user + sys) of each run's process

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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
        "seed=11",
        "agent=llm",
        "model=smollm2",
        "progress=false",
        f"llm.store_path={tmp / 'store.sqlite'}",
        f"hydra.run.dir={run_dir}",
        *extra,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "CI": "true"}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-3000:]}")
    CPU[name] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (tmp / f"{name}.stdout").write_text(proc.stdout)
    return wall, run_dir


def report_local(llm: dict, n: int) -> None:
    """Tokens per call and speeds from the manifest's llm.local block."""
    loc = llm.get("local") or {}
    calls = max(int(loc.get("calls") or 0), 1)
    if not loc:
        print("no llm.local block (not the embedded model?)")
        return
    if loc.get("grammar_calls"):
        print(
            f"per call ({loc['calls']} calls, {n} decisions): prompt {loc['prompt_tokens'] / calls:.0f} tokens; "
            f"completion {loc['completion_tokens'] / calls:.1f}, all sampled"
        )
    else:
        print(
            f"per call ({loc['calls']} calls, {n} decisions): prompt {loc['prompt_tokens'] / calls:.0f} tokens, "
            f"reused from the KV cache {loc['reused_tokens'] / calls:.0f} (reuse rate {loc['reuse_rate']:.1%}), "
            f"evaluated {loc['evaluated_tokens'] / calls:.0f}; completion {loc['completion_tokens'] / calls:.1f} "
            f"= sampled {loc['sampled_tokens'] / calls:.1f} + forced {loc['forced_tokens'] / calls:.1f}"
        )
    if loc.get("grammar_calls"):
        print(
            f"{loc['grammar_calls']} calls decoded by llama.cpp's grammar: reuse and speeds not measured "
            f"(model total {loc['wall_s']:.1f} s; --reuse-of STORE estimates the reuse)"
        )
        return
    steps = loc["sampled_tokens"]
    print(
        f"speeds: prompt evaluation {loc['evaluated_tokens'] / max(loc['prefill_s'], 1e-9):.0f} tokens/s, "
        f"answer {loc['decode_s'] / max(steps, 1) * 1000:.0f} ms per sampled token (forced text included); "
        f"seconds: prefill {loc['prefill_s']:.1f}, answer {loc['decode_s']:.1f}, KV states {loc['state_s']:.1f}, "
        f"model total {loc['wall_s']:.1f}"
    )


def reuse_of(store: Path) -> None:
    """Replay a store's decision prompts (in the order sent) through the tokenizer and count the prefix
    the old path reused: llama-cpp-python's LlamaRAMCache (state saved after every call under prompt +
    completion, loaded when its prefix beats the live context; capacity not modelled: an upper bound)."""
    import numpy as np
    from omegaconf import OmegaConf

    from trustsim.llm import local
    from trustsim.llm.config import parse_model_config
    from trustsim.llm.local_decode import _common

    cfg = parse_model_config(OmegaConf.load(REPO / "conf/model/smollm2.yaml")).local
    engine = local._engine(cfg, local.load_model(cfg))
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = con.execute("SELECT request, text, completion_tokens FROM responses ORDER BY created").fetchall()
    live: list[int] = []
    saved: list[np.ndarray] = []
    total = reused = completion = 0
    for request, text, comp in rows:
        tokens = engine.prompt_tokens(json.loads(request)["messages"])
        best = max([_common(np.asarray(live, dtype=np.intc), tokens), *(_common(k, tokens) for k in saved)])
        reused += min(best, len(tokens) - 1)
        total += len(tokens)
        completion += comp
        live = tokens + engine._tok(text)
        saved.append(np.asarray(live, dtype=np.intc))
    n = max(len(rows), 1)
    print(
        f"{store}: {len(rows)} calls; per call prompt {total / n:.0f} tokens, reused {reused / n:.0f} "
        f"(reuse rate {reused / max(total, 1):.1%}), evaluated {(total - reused) / n:.0f}, "
        f"completion {completion / n:.1f} (all sampled)"
    )


def main() -> None:
    if sys.argv[1:2] == ["--reuse-of"]:
        reuse_of(Path(sys.argv[2]))
        return
    extra = sys.argv[1:]
    tmp = Path(tempfile.mkdtemp(prefix="bench_llm_local_"))
    load_before = _load()
    wall, run_dir = run(tmp, "original", extra)
    m = json.loads((run_dir / "manifest.json").read_text())
    d = pd.read_csv(run_dir / "decisions.csv")
    llm = d[d.seat != "D"]
    n = len(llm)
    print(f"cores: {os.cpu_count()}  overrides: {' '.join(extra) or '-'}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {_load()}")
    print(
        f"original run: wall {wall:.1f} s (job {m['timings']['wall_s']:.1f} s), CPU {CPU['original']:.1f} s "
        f"(user + sys; with model.local.n_threads=1 about the wall time on an idle core), "
        f"games {m['counts']['games']}"
    )
    print(
        f"LLM decisions {n}, calls sent {m['llm']['calls_sent']}, "
        f"time per decision {m['timings']['wall_s'] / max(n, 1):.2f} s (job wall / decisions), "
        f"mean call latency {_mean_latency(run_dir):.2f} s"
    )
    report_local(m["llm"], n)
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
