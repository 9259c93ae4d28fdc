"""The Python API (trustsim.api) and the job lifecycle around any failure."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from trustsim import api
from trustsim.contract import agent_spec, register_agent, unregister_agent
from trustsim.errors import ConfigError


def test_run_inside_a_running_event_loop(tmp_path):
    async def cell() -> api.RunResult:
        return api.run("mid2strike", ["agent=bayes", "progress=false"], run_dir=tmp_path / "run")

    result = asyncio.run(cell())
    assert result.status == "complete" and result.exit_code == 0
    games = result.table("games")
    assert isinstance(games, pd.DataFrame) and len(games) == 11
    assert set(result.tables) >= {"decisions", "games", "agent_games", "predictions"}
    loaded = api.load(result.run_dir)
    assert loaded.status == "complete" and loaded.manifest["run_id"] == result.manifest["run_id"]
    assert loaded.table("decisions").equals(result.table("decisions"))


def test_llm_agent_inside_a_running_event_loop(tmp_path, monkeypatch):
    from trustsim.llm.fake_server import FakeServer

    monkeypatch.setenv("TRUSTSIM_API_KEY_TEST", "sk-api-test")
    with FakeServer() as srv:
        overrides = [
            "agent=llm",
            "model=openai_compatible",
            f"model.api_base={srv.api_base}",
            "model.litellm_model=openai/fake-model",
            "model.api_key_env=TRUSTSIM_API_KEY_TEST",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
            "game.games=2",
            "progress=false",
        ]

        async def cell() -> api.RunResult:
            return api.run("mid2strike", overrides, run_dir=tmp_path / "llm")

        result = asyncio.run(cell())
        assert result.status == "complete", result.failure
        assert result.manifest["llm"]["calls_sent"] == len(srv.requests) > 0


def test_compose_and_errors(tmp_path):
    cfg = api.compose("mid2strike", ["agent=bayes"])
    assert cfg["name"] == "mid2strike" and cfg["schedule"]["name"] == "mid2strike"
    with pytest.raises(ConfigError, match=r"schedule\.pattern is required"):
        api.compose(None, ["schedule=custom"])
    with pytest.raises(TypeError):
        api.compose("mid2strike", "agent=bayes")  # type: ignore[arg-type]
    bad = api.run("mid2strike", ["agent=bayes", "+game.coin=2"], run_dir=tmp_path / "bad")
    assert bad.status == "failed" and bad.exit_code == 2 and "game.coin" in bad.failure["reason"]
    assert api.load(tmp_path / "nothing").status == "missing"
    with pytest.raises(FileNotFoundError, match="no table 'nope'"):
        api.load(tmp_path / "bad").table("nope")


class _Crash(Exception):
    pass


def test_any_exception_ends_with_a_failed_manifest(tmp_path, capsys):
    bayes = agent_spec("escape_room", "bayes")

    def crashing(**params):
        policy = bayes.factory(**params)

        def decide(obs):
            raise _Crash("the policy broke\nsecond line")

        policy.decide = decide
        return policy

    register_agent("escape_room", "zz_crash", crashing, params=bayes.params)
    try:
        result = api.run(
            "mid2strike", ["agent=bayes", "agent.name=zz_crash", "progress=false"], run_dir=tmp_path / "crash"
        )
    finally:
        unregister_agent("escape_room", "zz_crash")
    assert result.exit_code == 1 and result.status == "failed"
    assert result.failure["type"] == "_Crash"
    assert result.failure["reason"] == "the policy broke"
    assert "_Crash: the policy broke" in capsys.readouterr().err
    assert result.events()[-1]["type"] == "run_end"


def test_a_hosted_job_prints_no_path_of_its_scratch_folder(tmp_path, capsys) -> None:
    """A harness (Inspect) runs each job in a folder it deletes afterwards: the completion line names none."""
    from trustsim.host import Host, hosting
    from trustsim.job import run_job

    cfg = api.compose("mid2strike", ["agent=bayes", "game.games=2", "progress=false"])
    assert run_job(cfg, tmp_path / "alone") == 0
    assert f"-> {tmp_path / 'alone'}" in capsys.readouterr().out
    with hosting(Host()):
        assert run_job(cfg, tmp_path / "hosted") == 0
    out = capsys.readouterr().out
    assert "complete (" in out and "->" not in out and str(tmp_path) not in out
