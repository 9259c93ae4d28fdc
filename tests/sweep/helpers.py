"""Jobs of a sweep for the launcher's tests: LLM jobs against the fake server, answered per request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from trustsim import api
from trustsim.launch import SweepJob, sweep_job
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_SWEEP_TEST_KEY"
KEY = "sweep-test-key-0000"
TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")


def reply(payload: dict[str, Any]) -> str:
    """An answer that depends on the request only: pass or verify, confidences from its digest (so the tables
    come out the same whatever order requests arrive in)."""
    digest = hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).digest()
    action = {"action": "verify", "target": 1 + digest[0] % 4} if digest[1] % 3 == 0 else {"action": "pass"}
    confidence = {f"Q{k}": round(0.05 * (digest[1 + k] % 21), 2) for k in range(1, 5)}
    return json.dumps({**action, "confidence": confidence, "reasoning": f"r{digest[5]}"})


def llm_overrides(server: FakeServer, store: Path, *extra: str, model: str = "openai/fake") -> list[str]:
    return [
        "agent=llm",
        "agent.prompt=trustsim",
        "model=openai_compatible",
        f"model.api_base={server.api_base}",
        f"model.litellm_model={model}",
        f"model.api_key_env={KEY_ENV}",
        f"llm.store_path={store}",
        "llm.backoff_base_s=0.05",
        "llm.backoff_max_s=0.5",
        "game.games=2",
        *extra,
    ]


def job(number: int, overrides: list[str], root: Path) -> SweepJob:
    """A validated job of a sweep, composed as the command line would."""
    return sweep_job(number, overrides, root / f"{number:03d}", api.compose(None, overrides))


def tables(run_dir: Path) -> dict[str, bytes]:
    return {name: (run_dir / name).read_bytes() for name in TABLES if (run_dir / name).exists()}


def manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text())
