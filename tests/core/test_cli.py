"""The command line end to end: run directory contents, determinism, sweeps and launchers, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import cli

TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")


def trustsim(
    cwd: Path, *args: str, env: dict | None = None, timeout: int = 240
) -> subprocess.CompletedProcess:
    return cli("trustsim", *args, cwd=cwd, env={"CI": "true", **(env or {})}, timeout=timeout)


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("manifest.json"))


@pytest.mark.slow
def test_main_experiment_writes_a_complete_run_directory(tmp_path):
    proc = trustsim(tmp_path, "+experiment=mid2strike", "agent=bayes", "hydra.run.dir=run1")
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "run1"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["cell"] == {
        "agent": "bayes",
        "model": "scripted",
        "prompt": None,
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
    assert "config error at 'experiment': unknown option 'nope'" in proc.stderr and proc.returncode == 2
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_unknown_key_is_a_clear_error(tmp_path):
    proc = trustsim(tmp_path, "+experiment=smooth", "game.colors=3")
    assert proc.returncode != 0 and "colors" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_bad_value_fails_at_start_naming_the_key(tmp_path):
    proc = trustsim(tmp_path, "+experiment=smooth", "game.coins=-2", "hydra.run.dir=bad")
    assert proc.returncode == 2
    assert "config error at 'game.coins': must be >= 0" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["trustsim", "basic", "joblib", "submitit_local"])
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


@pytest.mark.slow
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
    # a key on the command line is refused before anything is written (keys come from the environment)
    assert proc.returncode == 2 and "model.api_key_env" in proc.stderr and secret not in proc.stderr
    proc = trustsim(
        tmp_path, "+experiment=smooth", "agent=bayes", "hydra.run.dir=run", env={"OPENAI_API_KEY": secret}
    )
    assert proc.returncode == 0, proc.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path


@pytest.mark.slow
def test_multirun_writes_one_sweep_directory_with_a_job_index(tmp_path):
    proc = trustsim(tmp_path, "-m", "+experiment=1strike,2strike", "agent=bayes", "game.games=2", timeout=400)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sweeps = [p for p in (tmp_path / "outputs" / "sweeps").glob("*/*") if p.is_dir()]
    assert len(sweeps) == 1, sweeps  # one sweep directory, no stray <ts>_default directory
    assert not (tmp_path / "outputs" / "runs").exists()
    jobs = sorted(p.name for p in sweeps[0].iterdir() if p.is_dir())
    assert jobs == [
        "000_+experiment=1strike,agent=bayes,game.games=2",
        "001_+experiment=2strike,agent=bayes,game.games=2",
    ]
    index = (sweeps[0] / "jobs.csv").read_text().splitlines()
    assert index[0] == "job,dir,overrides,status,run_id,failure" and len(index) == 3
    assert all(",complete," in line for line in index[1:])


@pytest.mark.slow
def test_multirun_with_a_failed_job_exits_non_zero_naming_it(tmp_path):
    """One job at a time (the basic launcher): the others run. trustsim's launcher refuses the whole sweep
    first (tests/sweep/test_launcher_cli.py)."""
    proc = trustsim(
        tmp_path,
        "-m",
        "+experiment=1strike",
        "agent=bayes",
        "game.games=2",
        "seed=0,-1",
        "hydra/launcher=basic",
        "hydra.sweep.dir=sw",
    )
    assert proc.returncode == 1
    assert "1 of 2 jobs did not complete" in proc.stderr
    assert "job 1 [+experiment=1strike agent=bayes game.games=2 seed=-1]" in proc.stderr
    assert "config error at 'seed'" in proc.stderr
    index = (tmp_path / "sw" / "jobs.csv").read_text()
    assert ",failed," in index and ",complete," in index


@pytest.mark.slow
def test_unwritable_run_directory_says_what_to_do(tmp_path):
    (tmp_path / "a_file").write_text("")
    proc = trustsim(tmp_path, "+experiment=smooth", "agent=bayes", "hydra.run.dir=a_file/run")
    assert proc.returncode == 2
    assert "cannot write the output directory 'a_file/run'" in proc.stderr and "hydra.run.dir=" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_unknown_keys_and_ineffective_settings_from_the_command_line(tmp_path):
    for args, key in ((["+game.coin=2"], "game.coin"), (["+foo=1"], "foo")):
        proc = trustsim(tmp_path, "+experiment=mid2strike", "agent=bayes", *args, "hydra.run.dir=r")
        assert proc.returncode == 2 and f"config error at '{key}'" in proc.stderr
    proc = trustsim(
        tmp_path, "+experiment=mid2strike", "agent=bayes", "game.verifier=llm", "hydra.run.dir=r2"
    )
    assert proc.returncode == 2 and "makes no LLM calls" in proc.stderr
    proc = trustsim(tmp_path, "agent=bayes", "schedule=custom", "hydra.run.dir=r3")
    assert proc.returncode == 2 and "schedule.pattern is required" in proc.stderr
