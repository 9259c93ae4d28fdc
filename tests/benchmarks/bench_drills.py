"""Reliability drills with figures: LLM runs against a fake OpenAI-compatible server that misbehaves.

Each drill runs ``+experiment=mid2strike agent=llm model=openai_compatible game.games=N`` (in-process,
through ``trustsim.api.run``) against a loopback server whose answers depend only on the request and whose
faults are drawn per (request, arrival), and reports: requests the server received, answers, retries (re-sends),
faults served, wall time, status, and whether the tables are byte-identical to the clean run's.

    python tests/benchmarks/bench_drills.py [--games 11] [--latency 0.0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from trustsim import api
from trustsim.llm.fake_server import FakeServer

TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")
DRILLS = {
    "clean": None,
    "20% empty choices": {"empty": 0.2},
    "10% null content + 10% empty": {"null": 0.1, "empty": 0.1},
    "10% 429 + 5% 500 + 5% drops": {"429": 0.1, "500": 0.05, "drop": 0.05},
    "100% empty choices": {"empty": 1.0},
}


def reply(payload: dict) -> str:
    digest = hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).digest()
    action = f"Verify: Q{1 + digest[1] % 4}" if digest[0] % 3 == 0 else "Pass"
    return f"REASONING: drill answer {digest[2]}\nDECISION: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=11)
    parser.add_argument("--latency", type=float, default=0.0, help="server delay per answer (s)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # retry warnings would flood the table
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tmp = Path(tempfile.mkdtemp(prefix="trustsim-drills-"))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.games} games, port {port}")
    print("| drill | status | requests | answers | retries | faults | wall s | tables = clean |")
    print("|---|---|---|---|---|---|---|---|")
    clean_dir: Path | None = None
    for i, (name, mix) in enumerate(DRILLS.items()):
        with FakeServer(reply=reply, mix=mix, port=port, delay_s=args.latency) as server:
            overrides = [
                "agent=llm",
                "model=openai_compatible",
                f"model.api_base={server.api_base}",
                "model.litellm_model=openai/fake-model",
                f"llm.store_path={tmp / f'store{i}.sqlite'}",
                "llm.backoff_base_s=0.01",
                "llm.backoff_max_s=0.05",
                f"game.games={args.games}",
                "progress=false",
            ]
            start = time.perf_counter()
            result = api.run("mid2strike", overrides, run_dir=tmp / f"run{i}")
            wall = time.perf_counter() - start
            received = len(server.requests)
            faults = sum(server.faults_served.values())
        llm = result.manifest.get("llm") or {}
        if clean_dir is None:
            clean_dir = result.run_dir
        same = (
            all((result.run_dir / t).read_bytes() == (clean_dir / t).read_bytes() for t in TABLES)
            if result.status == "complete"
            else "n/a"
        )
        print(
            f"| {name} | {result.status} (exit {result.exit_code}) | {received} | {llm.get('calls_sent', 0)} "
            f"| {llm.get('retries', 0)} | {faults} | {wall:.2f} | {same} |"
        )


if __name__ == "__main__":
    main()
