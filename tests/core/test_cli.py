"""The command line end to end: run directory contents, determinism, sweeps and launchers, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")


def trustsim(
    cwd: Path, *args: str, env: dict | None = None, timeout: int = 240
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trustsim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "CI": "true", **(env or {})},
    )


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("manifest.json"))


def test_main_experiment_writes_a_complete_run_directory(tmp_path):
    proc = trustsim(tmp_path, "+experiment=mid2strike", "agent=bayes", "hydra.run.dir=run1")
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "run1"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["cell"] == {
        "agent": "bayes",
        "model": "scripted",
        "schedule": "mid2strike",
        "memory": "transcript",
        "partner_slot": "fixed",
    }
    assert manifest["counts"]["games"] == 11 and manifest["versions"]["mesa"].startswith("3.3")
    for name in TABLES:
        assert (run / name).stat().st_size > 0
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "run_start" and events[-1]["type"] == "run_end"
    assert sum(e["type"] == "game_end" for e in events) == 11

    # Same command + same seed → byte-identical tables.
    proc = trustsim(tmp_path, "+experiment=mid2strike", "agent=bayes", "hydra.run.dir=run2")
    assert proc.returncode == 0, proc.stderr
    for name in TABLES:
        assert (run / name).read_bytes() == (tmp_path / "run2" / name).read_bytes(), name


def test_unknown_preset_is_a_clear_error(tmp_path):
    proc = trustsim(tmp_path, "+experiment=nope")
    assert proc.returncode != 0
    assert "Could not find 'experiment/nope'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_key_is_a_clear_error(tmp_path):
    proc = trustsim(tmp_path, "+experiment=smooth", "game.colors=3")
    assert proc.returncode != 0 and "colors" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_value_fails_at_start_naming_the_key(tmp_path):
    proc = trustsim(tmp_path, "+experiment=smooth", "game.coins=-2", "hydra.run.dir=bad")
    assert proc.returncode == 2
    assert "config error at 'game.coins': must be >= 0" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("launcher", ["basic", "joblib", "submitit_local"])
def test_multirun_sweeps(tmp_path, launcher):
    args = [
        "-m",
        "+experiment=glob(*strike,exclude=[mid*])",
        "agent=bayes",
        "seed=0,1",
        f"hydra/launcher={launcher}",
        "hydra.sweep.dir=sweep",
    ]
    if launcher == "joblib":
        args.append("hydra.launcher.n_jobs=2")
    if launcher == "submitit_local":
        args += ["hydra.launcher.timeout_min=5", "hydra.launcher.cpus_per_task=1"]
    proc = trustsim(tmp_path, *args, timeout=400)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dirs = run_dirs(tmp_path / "sweep")
    assert len(dirs) == 6  # 1strike, 2strike, 3strike × 2 seeds
    manifests = [json.loads((d / "manifest.json").read_text()) for d in dirs]
    assert {m["status"] for m in manifests} == {"complete"}
    assert {m["cell"]["schedule"] for m in manifests} == {"1strike", "2strike", "3strike"}
    assert len({m["run_id"] for m in manifests}) == 6


def test_secrets_never_reach_any_file(tmp_path):
    secret = "sk-test-PLANTED-0123456789abcdef"
    proc = trustsim(
        tmp_path,
        "+experiment=smooth",
        "agent=bayes",
        "hydra.run.dir=run",
        "+model.api_key=" + secret,
        env={"OPENAI_API_KEY": secret},
    )
    assert proc.returncode == 0, proc.stderr
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
