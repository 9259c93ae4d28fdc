"""The default experiment on the embedded model, then its replay from the request store.

Runs ``python -m trustsim +experiment=mid2strike seed=11`` (agent=llm, model=smollm2: the README quick start)
with a fresh request store and reports wall time, decisions, calls, tokens per call (prompt; reused from
the KV cache, i.e. the reuse rate; evaluated; completion = sampled + forced) and the per-token speeds, with
the load average; then runs the same command again (every response replayed from the store) and reports
its wall time as a fraction of the original.

    python tests/benchmarks/bench_llm_local.py [extra hydra overrides...]
    python tests/benchmarks/bench_llm_local.py --base 5c52daa --rounds 2 model.local.n_threads=1
        # old (the commit's tree) and new (this checkout) in one sitting, alternated; CPU-seconds per phase
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


# Run inside each measured process (old or new code alike): CPU-seconds (process_time: every thread) spent in
# the guided decoder's phases, written as JSON at exit to $BENCH_PHASES_OUT.
PROBE = """
import atexit, json, os, runpy, sys, time
from trustsim.llm import local_decode as ld
cpu = dict.fromkeys(("call", "prefill", "state", "forward"), 0.0)

def timed(cls, name, phase):
    inner = getattr(cls, name)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            cpu[phase] += time.process_time() - start
    setattr(cls, name, wrapper)

timed(ld.Engine, "complete", "call")
timed(ld.Engine, "prefill", "prefill")
timed(ld.Engine, "_save", "state")
timed(ld.Engine, "_load", "state")
timed(ld.Engine, "_eval", "forward")

def write():
    t = os.times()
    cpu["process"] = t.user + t.system
    with open(os.environ["BENCH_PHASES_OUT"], "w") as f:
        json.dump(cpu, f)

atexit.register(write)
sys.argv = ["trustsim", *sys.argv[1:]]
runpy.run_module("trustsim", run_name="__main__", alter_sys=True)
"""
PHASES = (
    ("prefill", "prompt evaluation (prefill less state swaps)"),
    ("state", "KV state save/load"),
    ("forward", "answer forward passes (sampled + forced tokens)"),
    ("python", "sampling and Python between answer tokens"),
    ("outside", "everything outside model calls (imports, Hydra, game, tables)"),
)


def tree_of(rev: str) -> Path:
    """A copy of the repository's files at ``rev`` (git archive), in a temporary directory."""
    out = Path(tempfile.mkdtemp(prefix=f"bench_llm_local_{rev[:8]}_"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def measured_run(tree: Path, tmp: Path, name: str, extra: list[str]) -> dict[str, float]:
    """One fresh-store default run of the code in ``tree``: wall, CPU-seconds per phase, calls, validity."""
    run_dir, phases_out = tmp / name, tmp / f"{name}.phases.json"
    cmd = [
        sys.executable,
        "-c",
        PROBE,
        "+experiment=mid2strike",
        "seed=11",
        "agent=llm",
        "model=smollm2",
        "progress=false",
        f"llm.store_path={tmp / f'{name}.sqlite'}",
        f"hydra.run.dir={run_dir}",
        *extra,
    ]
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(tree), "BENCH_PHASES_OUT": str(phases_out)}
    load = _load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    cpu = json.loads(phases_out.read_text())
    m = json.loads((run_dir / "manifest.json").read_text())
    d = pd.read_csv(run_dir / "decisions.csv")
    llm = d[d.seat != "D"]
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "prefill": cpu["prefill"] - cpu["state"],
        "state": cpu["state"],
        "forward": cpu["forward"],
        "python": cpu["call"] - cpu["prefill"] - cpu["forward"],
        "outside": cpu["process"] - cpu["call"],
        "calls": m["llm"]["calls_sent"],
        "valid": float((llm.invalid_reason.isna()).mean()) if len(llm) else 0.0,
        "load_before": load,
        "load_after": _load(),
        "decisions": (run_dir / "decisions.csv").read_bytes(),
    }


def compare(base: str, rounds: int, extra: list[str]) -> None:
    """Old (``base``) and new (this checkout) alternated in one sitting: CPU-seconds per phase."""
    trees = {"old": tree_of(base), "new": REPO}
    tmp = Path(tempfile.mkdtemp(prefix="bench_llm_local_cmp_"))
    print(f"cores: {os.cpu_count()}  old: {base}  new: {REPO}  overrides: {' '.join(extra) or '-'}")
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for r in range(rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            res = measured_run(trees[name], tmp, f"{name}{r}", extra)
            results[name].append(res)
            print(
                f"round {r} {name}: wall {res['wall']:.1f} s, CPU {res['cpu']:.1f} s, calls {res['calls']}, "
                f"valid {res['valid']:.0%}, load {res['load_before']} -> {res['load_after']}",
                flush=True,
            )
    print(f"\nCPU-seconds per phase (mean of {rounds} run(s) each; the process's own CPU, every thread):")
    print("| phase | old | new | new/old |\n|---|---|---|---|")
    for key, label in (*PHASES, ("cpu", "whole command (user + sys)")):
        old = sum(x[key] for x in results["old"]) / rounds
        new = sum(x[key] for x in results["new"]) / rounds
        print(f"| {label} | {old:.1f} | {new:.1f} | {new / max(old, 1e-9):.3f} |")
    same = all(o["decisions"] == n["decisions"] for o, n in zip(results["old"], results["new"], strict=True))
    print(f"decisions.csv byte-identical old vs new: {same}")


def main() -> None:
    if sys.argv[1:2] == ["--reuse-of"]:
        reuse_of(Path(sys.argv[2]))
        return
    if sys.argv[1:2] == ["--base"]:
        args = sys.argv[3:]
        rounds = 1
        if args[:1] == ["--rounds"]:
            rounds, args = int(args[1]), args[2:]
        compare(sys.argv[2], rounds, args)
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
