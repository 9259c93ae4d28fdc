"""An LLM sweep at the provider's pace: trustsim's launcher vs the basic and joblib launchers, against the bound.

The shape of the reference study: 20 model × schedule cells over 6 model names (``openai/m0`` ... ``m5``, one
endpoint each), 5 seeds each (100 jobs), the trustsim prompt style, ``game.games`` games per session (1 by
default, shrunk from 11 so that the basic launcher finishes in minutes, not hours). The cells come from a plan
file (``+plan=plan.csv``, crossed with ``seed='range(5)'``). A loopback OpenAI-compatible server (its own
thread of this process) answers like a provider: every request after a latency drawn from a lognormal
distribution (median ``--median`` s, ``--sigma``), and at most ``--rpm`` requests per minute per model name,
a 429 with ``Retry-After`` above it (a sliding 60 s window). Every run starts from an empty request store.

For each launcher it reports the wall time (and the sweep process's CPU time), the requests the server
received, the 429s it sent and the most requests of one model it accepted within any 60 s; and, beside them:

- **the bound**: the larger of the longest session's critical path (the sum over its rounds of the slowest
  answer of the round, from the events of the run) and, per endpoint, requests ÷ rate;
- **the reference design's estimate**: one request at a time, requests × median latency.

``trustsim`` runs with ``llm.requests_per_minute`` set to the provider's limit (as a user who knows it would),
``trustsim-unpaced`` without it (the window and Retry-After find the pace), ``basic`` and ``joblib`` (2
processes, each with the same setting: together they send at twice the rate, hence the 429s).

    python tests/benchmarks/bench_sweep.py [--rpm 60] [--median 1.5] [--games 1] [--seeds 5]
        [--launchers trustsim,trustsim-unpaced,basic,joblib]
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.sweep.helpers import reply  # noqa: E402 - after the path
from trustsim.llm.fake_server import FakeServer, lognormal_latency  # noqa: E402

MODELS = tuple(f"m{i}" for i in range(6))
SCHEDULES = ("smooth", "1strike", "2strike", "3strike", "mid2strike", "anchor", "recur", "anchor_dwrong")
CELLS = 20
KEY_ENV = "TRUSTSIM_BENCH_KEY"
LAUNCHERS = {
    "trustsim": ["hydra/launcher=trustsim"],
    "trustsim-unpaced": ["hydra/launcher=trustsim"],
    "basic": ["hydra/launcher=basic"],
    "joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
}


def plan_file(folder: Path) -> Path:
    """20 cells (model, schedule), each model with 3-4 schedules: distinct pairs (i mod 6, i mod 8)."""
    path = folder / "plan.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["label", "overrides", "runs"])
        for i in range(CELLS):
            model, schedule = MODELS[i % len(MODELS)], SCHEDULES[i % len(SCHEDULES)]
            overrides = f"+experiment={schedule} model.name={model} model.litellm_model=openai/{model}"
            writer.writerow([f"{model} {schedule}", overrides, 1])
    return path


def sweep_args(server: FakeServer, folder: Path, launcher: str, args: argparse.Namespace) -> list[str]:
    paced = [] if launcher == "trustsim-unpaced" else [f"llm.requests_per_minute={args.rpm}"]
    return [
        "-m",
        f"+plan={plan_file(folder)}",
        f"seed=range({args.seeds})",
        "agent=llm",
        "agent.prompt=trustsim",
        "model=openai_compatible",
        f"model.api_base={server.api_base}",
        f"model.api_key_env={KEY_ENV}",
        f"game.games={args.games}",
        f"llm.store_path={folder / 'store.sqlite'}",
        f"hydra.sweep.dir={folder / 'sweep'}",
        *paced,
        *LAUNCHERS[launcher],
    ]


def critical_path(sweep: Path) -> float:
    """The longest session's critical path (s): the sum over its rounds of the round's slowest answer."""
    longest = 0.0
    for events in sweep.glob("*/events.jsonl"):
        rounds: dict[tuple, float] = collections.defaultdict(float)
        for line in events.read_text().splitlines():
            event = json.loads(line)
            if event.get("type") == "decision" and "latency_s" in event:
                key = (event.get("session"), event.get("game"), event.get("round"))
                rounds[key] = max(rounds[key], float(event["latency_s"]))
        longest = max(longest, sum(rounds.values()))
    return longest


def run(launcher: str, args: argparse.Namespace, tmp: Path) -> dict:
    folder = tmp / launcher
    folder.mkdir(parents=True)
    server = FakeServer(
        reply=reply,
        rate_limit=args.rpm,
        rate_window_s=60.0,
        latency=lognormal_latency(args.median, args.sigma),
    ).start()
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(ROOT), KEY_ENV: "bench-key-0000"}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, clock0 = time.perf_counter(), time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "trustsim", *sweep_args(server, folder, launcher, args)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server.stop()
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
    jobs = (
        list(csv.DictReader((folder / "sweep" / "jobs.csv").open()))
        if (folder / "sweep" / "jobs.csv").exists()
        else []
    )
    per_model = {m: len(t) for m, t in server.accepted.items()}
    arrivals = sorted(t for times in server.accepted.values() for t in times)
    path = critical_path(folder / "sweep")
    answered = len(server.requests) - server.rate_limited
    bound = max(path, max(per_model.values(), default=0) / args.rpm * 60.0)
    return {
        "launcher": launcher,
        "exit": done.returncode,
        "complete": sum(j["status"] == "complete" for j in jobs),
        "jobs": len(jobs),
        "wall": wall,
        "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "requests": len(server.requests),
        "answered": answered,
        "429s": server.rate_limited,
        "most_in_60s": server.most_in_window(),
        "critical_path": path,
        "first": arrivals[0] - clock0 if arrivals else float("nan"),
        "last": arrivals[-1] - clock0 if arrivals else float("nan"),
        "bound": bound,
        "reference": answered * args.median,
        "load": (load, os.getloadavg()[0]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rpm", type=int, default=60, help="requests per minute per model (the provider's limit)"
    )
    parser.add_argument("--median", type=float, default=1.5, help="median latency (s)")
    parser.add_argument("--sigma", type=float, default=0.5, help="lognormal sigma of the latency")
    parser.add_argument("--games", type=int, default=1, help="games per session")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--launchers", default="trustsim,trustsim-unpaced,basic,joblib")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="trustsim-bench-sweep-"))
    print(
        f"{CELLS} cells x {args.seeds} seeds = {CELLS * args.seeds} jobs over {len(MODELS)} models; {args.games} "
        f"game(s)/session; {args.rpm} requests/min per model; latency lognormal median {args.median} s, "
        f"sigma {args.sigma}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(
        "| launcher | jobs complete | wall s | CPU s | requests (answered) | 429s | most/60 s per model "
        "| first / last request at s | critical path s | bound s | wall ÷ bound | reference estimate s "
        "| load before → after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for launcher in args.launchers.split(","):
        r = run(launcher, args, tmp)
        print(
            f"| {r['launcher']} | {r['complete']}/{r['jobs']} | {r['wall']:.1f} | {r['cpu']:.1f} | "
            f"{r['requests']} ({r['answered']}) | {r['429s']} | {r['most_in_60s']} | "
            f"{r['first']:.1f} / {r['last']:.1f} | {r['critical_path']:.1f} | "
            f"{r['bound']:.1f} | {r['wall'] / r['bound']:.2f} | {r['reference']:.0f} | "
            f"{r['load'][0]:.1f} → {r['load'][1]:.1f} |",
            flush=True,
        )
    print(f"(runs under {tmp}; median of latencies drawn: {statistics.median(_draws(args)):.2f} s)")


def _draws(args: argparse.Namespace) -> list[float]:
    draw = lognormal_latency(args.median, args.sigma)
    return [draw() for _ in range(10_000)]


if __name__ == "__main__":
    main()
