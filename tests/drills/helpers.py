"""Shared pieces of the drills: running the CLI (one batch interpreter, or real subprocesses), reading runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TRACEBACK = "Traceback (most recent call last)"
TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")


def cli_env(**extra: str) -> dict[str, str]:
    """Environment of a CLI run: the repo importable, no progress bars, the offline cost map."""
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "CI": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **extra,
    }


def run_batch(cases: list[dict[str, Any]], workdir: Path) -> list[dict[str, Any]]:
    """Run invocations through ``tests/drills/cli_batch.py`` (one interpreter); returns their results."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec, out = workdir / "cases.json", workdir / "results.json"
    spec.write_text(json.dumps(cases))
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/drills/cli_batch.py"), str(spec), str(out)],
        cwd=workdir,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def run_cli(args: list[str], cwd: Path, *, prefix: list[str] | None = None, timeout: float = 300, **env: str):
    """``python -m trustsim ARGS`` as a real subprocess; returns the CompletedProcess (text)."""
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "trustsim", *args],
        cwd=cwd,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text())


def decisions_recorded(run_dir: Path) -> int:
    """Decision events in a run's events.jsonl (0 when there is none)."""
    path = run_dir / "events.jsonl"
    if not path.exists():
        return 0
    return sum(json.loads(line).get("type") == "decision" for line in path.read_text().splitlines() if line)


def llm_overrides(api_base: str, store: Path, *extra: str, key_env: str | None = None) -> list[str]:
    """A small LLM run against a fake server: 2 mid2strike games, fast backoff."""
    return [
        "+experiment=mid2strike",
        "agent=llm",
        "model=openai_compatible",
        f"model.api_base={api_base}",
        "model.litellm_model=openai/fake-model",
        *([f"model.api_key_env={key_env}"] if key_env else []),
        f"llm.store_path={store}",
        "llm.backoff_base_s=0.01",
        "llm.backoff_max_s=0.02",
        "game.games=2",
        *extra,
    ]
