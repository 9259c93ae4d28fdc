"""Contract tests inherited by every registered game (Axelrod's TestPlayer, for games).

Each test is parametrised over the game registry: a game that registers a GameSpec (with an ``example``:
a small, fast, offline job) gets all of them without writing a line here.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trustsim import api
from trustsim.config import validate_config
from trustsim.contract import agents_for, games, register_agent, unregister_agent
from trustsim.errors import ConfigError
from trustsim.identity import config_hash, execution_keys, world_hash, world_keys
from trustsim.rundir import PREDICTION_KEYS, PREDICTION_MEASURES

REPO = Path(__file__).resolve().parents[2]
GAMES = sorted(games())
KEY_ENV = "TRUSTSIM_CONTRACT_KEY"


def example(name: str, *extra: str) -> list[str]:
    spec = games()[name]
    assert spec.example, f"GameSpec {name!r} has no example job: the contract tests need one"
    return [*spec.example, "progress=false", *extra]


def tables(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.glob("*.csv"))}


def run_ok(overrides: list[str], run_dir: Path) -> api.RunResult:
    result = api.run(None, overrides, run_dir)
    assert result.status == "complete", (result.exit_code, result.failure)
    return result


@pytest.fixture(params=GAMES)
def game(request) -> str:
    return request.param


def test_registry_is_sound(game):
    spec = games()[game]
    assert world_keys(spec)[0] == "seed" and all(isinstance(k, str) for k in world_keys(spec))
    assert "predictions" in spec.tables
    assert agents_for(game), f"no agent registered for {game!r}"
    valid = validate_config(api.compose(None, example(game)))
    assert valid.game is spec


def test_schema_rejects_unknown_keys(game):
    for override, key in (
        ("+game.zz_no_such_option=1", "game.zz_no_such_option"),
        ("+agent.zz_no_such_param=1", "agent.zz_no_such_param"),
        ("+zz_no_such_key=1", "zz_no_such_key"),
    ):
        cfg = api.compose(None, example(game, override))
        with pytest.raises(ConfigError, match=f"config error at '{key}': unknown key"):
            validate_config(cfg)


@pytest.mark.slow
def test_world_is_independent_of_registries_and_execution_settings(game, tmp_path):
    """Registering an agent, or changing concurrency/progress/call-layer settings, changes no world, no
    run id and no table byte; a replay of the same command is byte-identical."""
    spec = games()[game]
    first = run_ok(example(game), tmp_path / "first")
    valid = validate_config(api.compose(None, example(game)))
    hashes = (world_hash(valid.cfg, spec), config_hash(valid.cfg, spec))
    execution = ["progress=true", "llm.max_concurrency=3"]
    for path in execution_keys(spec):
        value = valid.cfg
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None  # model.limits: absent offline
        if isinstance(value, int) and not isinstance(value, bool):
            execution.append(f"{path}={value + 1}")
    existing = valid.agent
    register_agent(
        game, "zz_contract_dummy", existing.factory, params=existing.params, uses_llm=existing.uses_llm
    )
    try:
        again_cfg = validate_config(api.compose(None, example(game, *execution)))
        assert (world_hash(again_cfg.cfg, spec), config_hash(again_cfg.cfg, spec)) == hashes
        again = run_ok(example(game, *execution), tmp_path / "again")
    finally:
        unregister_agent(game, "zz_contract_dummy")
    assert tables(first.run_dir) and tables(again.run_dir) == tables(first.run_dir)
    assert again.manifest["run_id"] == first.manifest["run_id"]
    assert again.manifest["world_hash"] == first.manifest["world_hash"]


def test_world_does_not_depend_on_the_agent(game):
    spec = games()[game]
    valid = validate_config(api.compose(None, example(game)))
    others = [a for a in agents_for(game).values() if not a.uses_llm and a.name != valid.agent.name]
    if not others:
        pytest.skip(f"{game} has a single offline agent")
    other = validate_config(api.compose(None, example(game, f"agent={others[0].name}")))
    assert world_hash(other.cfg, spec) == world_hash(valid.cfg, spec)


@pytest.mark.slow
def test_memory_stays_flat(game, tmp_path):
    """No Mesa model outlives its game: a job of many games keeps none of them alive."""
    import mesa

    def alive() -> int:
        gc.collect()
        return sum(isinstance(o, mesa.Model) for o in gc.get_objects())

    before = alive()  # models other tests may still hold
    result = run_ok(example(game), tmp_path / "run")
    played = sum(result.manifest["counts"].values())
    after = alive()
    assert played > 0 and after <= before, (
        f"{after - before} Mesa models of {game!r} still alive after the job"
    )


def test_tables_follow_their_schemas(game, tmp_path):
    """Every table has the columns the GameSpec declares; predictions follow the calibration contract (its keys,
    the game's cell columns, its measures: trustsim.rundir.prediction_schema)."""
    spec = games()[game]
    result = run_ok(example(game), tmp_path / "run")
    columns = tuple(spec.table_columns("predictions"))
    assert columns[: len(PREDICTION_KEYS)] == PREDICTION_KEYS
    assert columns[-len(PREDICTION_MEASURES) :] == PREDICTION_MEASURES
    for name in spec.tables:
        path = result.run_dir / f"{name}.csv"
        assert path.exists(), f"{game} did not write {name}.csv"
        header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
        assert tuple(header) == tuple(spec.table_columns(name)), name
    predictions = result.table("predictions")
    assert set(predictions.game_type.dropna()) <= {game}


def test_runs_inside_a_running_event_loop(game, tmp_path):
    async def notebook_cell() -> api.RunResult:
        asyncio.get_running_loop()  # as in Jupyter: a loop is running
        return api.run(None, example(game), tmp_path / "in_loop")

    result = asyncio.run(notebook_cell())
    assert result.status == "complete"
    assert tables(result.run_dir) == tables(run_ok(example(game), tmp_path / "plain").run_dir)


# -- kill -9 and resume, with the game's LLM agent against the loopback fake server ------------------------


def _llm_overrides(game: str, api_base: str, store: Path) -> list[str]:
    llm_agents = [a.name for a in agents_for(game).values() if a.uses_llm]
    if not llm_agents:
        pytest.skip(f"{game} has no LLM agent")
    name = "llm" if "llm" in llm_agents else llm_agents[0]
    return example(
        game,
        f"agent={name}",
        "model=openai_compatible",
        f"model.api_base={api_base}",
        "model.litellm_model=openai/fake-model",
        f"model.api_key_env={KEY_ENV}",
        f"llm.store_path={store}",
        "llm.max_concurrency=1",
        "llm.backoff_base_s=0.01",
        "llm.backoff_max_s=0.02",
    )


def _stored(store: Path) -> int:
    if not store.exists():
        return 0
    conn = sqlite3.connect(store)
    try:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.slow
def test_kill_minus_9_then_resume(game, tmp_path, monkeypatch):
    """Killed mid-run, the same command resumes: no stored request is sent again and the tables equal
    those of an uninterrupted run."""
    from trustsim.llm.fake_server import FakeServer

    monkeypatch.setenv(KEY_ENV, "sk-contract-fake-key")
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(REPO)}
    with FakeServer(delay_s=0.15) as srv:
        store = tmp_path / "store.sqlite"
        args = [sys.executable, "-m", "trustsim", *_llm_overrides(game, srv.api_base, store)]
        proc = subprocess.Popen(
            [*args, f"hydra.run.dir={tmp_path / 'killed'}"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 90
        while time.time() < deadline and _stored(store) < 2 and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        stored = _stored(store)
        assert stored >= 2, "the job ended before it could be killed"
        sent_before = len(srv.requests)
        done = subprocess.run(
            [*args, f"hydra.run.dir={tmp_path / 'resumed'}"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        resumed = api.load(tmp_path / "resumed")
        assert resumed.manifest["llm"]["cache_hits"] >= stored
        assert len(srv.requests) - sent_before == resumed.manifest["llm"]["calls_sent"]
        fresh = api.run(
            None, _llm_overrides(game, srv.api_base, tmp_path / "fresh.sqlite"), tmp_path / "fresh"
        )
    assert fresh.status == "complete"
    assert tables(resumed.run_dir) == tables(fresh.run_dir)
    assert json.loads((tmp_path / "resumed" / "manifest.json").read_text())["status"] == "complete"


def test_a_broken_game_package_does_not_hide_the_others(tmp_path, monkeypatch, capsys):
    """Discovery imports every game; one that fails to import is reported and the rest still work."""
    import importlib

    import trustsim.contract as contract

    pkg = tmp_path / "games"
    (pkg / "zz_broken").mkdir(parents=True)
    (pkg / "zz_broken" / "__init__.py").write_text("raise RuntimeError('half-written game')\n")
    games_pkg = importlib.import_module("games")
    monkeypatch.setattr(games_pkg, "__path__", [*games_pkg.__path__, str(pkg)])
    monkeypatch.setattr(contract, "_discovered", False)
    monkeypatch.setattr(contract, "_IMPORT_ERRORS", {})
    assert set(GAMES) <= set(contract.games())
    assert "cannot import games.zz_broken (RuntimeError: half-written game)" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"games\.zz_broken failed to import"):
        contract.game_spec("zz_broken")
