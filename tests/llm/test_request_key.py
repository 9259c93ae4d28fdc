"""The request key covers every setting that changes an answer (trustsim.llm.keying): changing a keyed
setting sends the request again, changing an execution setting replays the stored answer."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from trustsim.llm import ChatRequest, keying
from trustsim.llm.client import LLMClient
from trustsim.llm.config import (
    EndpointLimits,
    LLMConfig,
    LocalModelConfig,
    ModelConfig,
    ModelPrice,
    parse_llm_config,
    parse_model_config,
)
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.store import KEY_VERSION, RequestStore, canonical_request, request_key
from trustsim.llm.transport import CallResult

from .helpers import REPO

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "state"}]


class Counting:
    """A transport that answers every call and remembers what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, model: str, messages: list, params: dict, **_: Any) -> CallResult:
        self.sent.append({"model": model, **params})
        return CallResult(f"answer {len(self.sent)}", 10, 2, 0.0, 0.01)


def ask(model: ModelConfig, llm: LLMConfig, store_path: Path, purpose: str = "decision") -> Counting:
    """One request through a fresh client on the store; the transport says whether it was sent."""
    transport = Counting()
    store = RequestStore(store_path)
    client = LLMClient(model, llm, store, transport=transport)
    asyncio.run(client.complete(ChatRequest(model.name, MESSAGES, sample=2, purpose=purpose)))
    store.close()
    return transport


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "weights" / "tiny.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF tiny weights v1")
    return path


def local_model(weights: Path, **local: Any) -> ModelConfig:
    return parse_model_config(
        {
            "name": "tiny",
            "litellm_model": "trustsim/tiny",
            "provider": "local",
            "params": {"temperature": 0.7, "max_tokens": 20, "seed": 0},
            "local": {"path": str(weights), **local},
        }
    )


def api_model(**over: Any) -> ModelConfig:
    return parse_model_config(
        {
            "name": "api",
            "litellm_model": "openai/m",
            "params": {"temperature": 0.0},
            "purpose_params": {"solve": {"max_tokens": 8}},
            **over,
        }
    )


def test_every_setting_is_classified_once() -> None:
    """A new model or model.local setting must be declared keyed or execution-only."""
    local = {f.name for f in dataclasses.fields(LocalModelConfig)}
    assert set(keying.LOCAL_KEYED) | set(keying.LOCAL_EXECUTION) == local
    assert not set(keying.LOCAL_KEYED) & set(keying.LOCAL_EXECUTION)
    model = {f.name for f in dataclasses.fields(ModelConfig)}
    groups = (keying.MODEL_KEYED, keying.MODEL_SHAPES_REQUEST, keying.MODEL_EXECUTION)
    assert set().union(*groups) == model
    assert sum(len(g) for g in groups) == len(model)


def test_api_model_keys_are_unchanged() -> None:
    """Keys of API models are those of stores written before the embedded model's settings were keyed."""
    req = ChatRequest("x", MESSAGES, {"max_tokens": 50}, sample=3)
    expected = {
        "gpt-5.1": "f858ded53fdd91dd0e9243eed936e84129db96c4e708b817344fa0c69072eaf3",
        "openai_compatible": "9cc9f8198c0f74faba6d2c9acbeeb0d9f745ba7edf126f6f2d239d6bc6458a7d",
    }
    for name, key in expected.items():
        model = parse_model_config(OmegaConf.load(REPO / f"conf/model/{name}.yaml"))
        req.model = model.name
        assert LLMClient(model, parse_llm_config({}), None).key(req) == key, name


# -- the embedded model's settings -------------------------------------------------------------------------
LOCAL_CHANGES: dict[str, Any] = {
    "decoder": "grammar",
    "n_batch": 128,
    "state_cache_mb": 0,
    "n_ctx": 4096,
    "n_threads": 1,
    "package": "another_package",  # ignored while path is set, and the weights are keyed by digest anyway
    "path": "COPY",  # the same bytes at another path
}


@pytest.mark.parametrize("name", sorted(LOCAL_CHANGES))
def test_a_keyed_local_setting_sends_an_execution_setting_replays(name, weights, tmp_path) -> None:
    assert set(LOCAL_CHANGES) == set(keying.LOCAL_KEYED) | set(keying.LOCAL_EXECUTION)
    store, llm = tmp_path / "s.sqlite", parse_llm_config({})
    assert len(ask(local_model(weights), llm, store).sent) == 1
    value = LOCAL_CHANGES[name]
    if value == "COPY":
        copy = tmp_path / "elsewhere.gguf"
        shutil.copyfile(weights, copy)
        value = str(copy)
    sent = ask(local_model(weights, **{name: value}), llm, store).sent
    assert len(sent) == (1 if name in keying.LOCAL_KEYED else 0), name
    assert len(ask(local_model(weights), llm, store).sent) == 0  # the first answer is still there


def test_other_weights_send_and_the_seed_follows_what_is_asked(weights, tmp_path) -> None:
    store, llm = tmp_path / "s.sqlite", parse_llm_config({})
    first = ask(local_model(weights), llm, store).sent
    weights.write_bytes(b"GGUF tiny weights v2")
    second = ask(local_model(weights), llm, store).sent
    grammar = ask(local_model(weights, decoder="grammar"), llm, store).sent
    assert len(first) == len(second) == len(grammar) == 1
    # the sampling seed comes from the request without the local settings: the same for every decoder
    assert first[0]["seed"] == second[0]["seed"] == grammar[0]["seed"]
    asked = request_key(canonical_request("trustsim/tiny", None, MESSAGES, local_model(weights).params, 2))
    assert first[0]["seed"] == int(asked[:8], 16) % 2**31


def test_the_weights_digest_is_hashed_once_per_file_version(weights, tmp_path, monkeypatch) -> None:
    store, llm = tmp_path / "s.sqlite", parse_llm_config({})
    hashed: list[Path] = []
    real = keying.hash_file
    monkeypatch.setattr(keying, "hash_file", lambda p: hashed.append(p) or real(p))
    monkeypatch.setattr(keying, "_DIGESTS", {})
    ask(local_model(weights), llm, store)
    assert len(hashed) == 1
    with sqlite3.connect(store) as conn:
        (value,) = conn.execute("SELECT value FROM meta WHERE name LIKE 'weights_sha256:%'").fetchone()
    assert value.endswith(keying.hash_file(weights))
    monkeypatch.setattr(keying, "_DIGESTS", {})  # a new process: the store remembers the digest
    assert len(ask(local_model(weights), llm, store).sent) == 0 and len(hashed) == 2  # (the check above)
    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched: hashed again, same digest
    assert len(ask(local_model(weights), llm, store).sent) == 0 and len(hashed) == 3


# -- every other model setting and the llm group -------------------------------------------------------------
MODEL_CHANGES: dict[str, Any] = {
    "litellm_model": "openai/other",
    "api_base": "http://127.0.0.1:9/v1",
    "params": {"temperature": 0.5},
    "purpose_params": {"solve": {"max_tokens": 7}},
    "provider": "litellm",  # on the embedded model: no longer computed by it
    "local": "see test_a_keyed_local_setting_sends_an_execution_setting_replays",
    "name": "renamed",
    "api_key_env": "TRUSTSIM_OTHER_KEY",
    "headers_env": {"X-Team": "TRUSTSIM_OTHER_KEY"},
    "drop_params": False,
    "weak": True,
    "price": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0),
    "limits": EndpointLimits(max_concurrency=2, requests_per_minute=60.0),
    "prompt_cache": True,  # the cache_control marks are sent, not keyed
}
PURPOSE = {"purpose_params": "solve"}


@pytest.mark.parametrize("name", sorted(set(MODEL_CHANGES) - {"local"}))
def test_a_keyed_model_setting_sends_an_execution_setting_replays(
    name, weights, tmp_path, monkeypatch
) -> None:
    assert set(MODEL_CHANGES) == set(keying.MODEL_KEYED) | set(keying.MODEL_EXECUTION)
    monkeypatch.setenv("TRUSTSIM_OTHER_KEY", "k")
    store, llm, purpose = tmp_path / "s.sqlite", parse_llm_config({}), PURPOSE.get(name, "decision")
    base = local_model(weights) if name == "provider" else api_model()
    assert len(ask(base, llm, store, purpose).sent) == 1
    changed = dataclasses.replace(base, **{name: MODEL_CHANGES[name]})
    assert len(ask(changed, llm, store, purpose).sent) == (1 if name in keying.MODEL_KEYED else 0), name


LLM_CHANGES: dict[str, Any] = {
    "budget_usd": 5.0,
    "budget_scope": "store",
    "replay_only": True,
    "max_concurrency": 1,
    "requests_per_minute": 600.0,
    "tokens_per_minute": 60000.0,
    "timeout_s": 30.0,
    "max_retries": 0,
    "backoff_base_s": 0.5,
    "backoff_max_s": 5.0,
    "backoff_seed": 3,
    "store_check": "full",
}


@pytest.mark.parametrize("name", sorted(LLM_CHANGES))
def test_every_llm_setting_replays(name, tmp_path) -> None:
    """The llm group is execution only; the store's location (store_path, store_dir) is where the
    answers are, and ``cache=false`` asks for every request to be sent again, by definition."""
    handled = {"store_path", "store_dir", "cache"}
    assert set(LLM_CHANGES) | handled == {f.name for f in dataclasses.fields(LLMConfig)}
    store = tmp_path / "s.sqlite"
    assert len(ask(api_model(), parse_llm_config({}), store).sent) == 1
    moved = tmp_path / "moved" / "s.sqlite"
    moved.parent.mkdir()
    shutil.copyfile(store, moved)  # a store keeps replaying wherever it lies
    assert len(ask(api_model(), parse_llm_config({name: LLM_CHANGES[name]}), moved).sent) == 0


# -- old stores --------------------------------------------------------------------------------------------
def test_an_old_store_replays_api_answers_and_resends_embedded_ones(weights, tmp_path, caplog) -> None:
    """A store written before key version 2: its API answers replay (their keys did not change); its
    embedded-model answers do not (nothing in them says which decoder, batch size or weights produced
    them): those requests are sent once more, and the old rows stay in the store."""
    store, llm = tmp_path / "old.sqlite", parse_llm_config({})
    ask(api_model(), llm, store)
    tiny = local_model(weights)
    old_canonical = canonical_request("trustsim/tiny", None, MESSAGES, tiny.params, 2)  # key version 1
    with sqlite3.connect(store) as conn:
        conn.execute("DELETE FROM meta WHERE name = 'key_version'")
        conn.execute(
            "INSERT INTO responses (key, model, api_base, sample, purpose, request, text, prompt_tokens,"
            " completion_tokens, cost_usd, latency_s, created, job) VALUES (?, 'trustsim/tiny', NULL, 2,"
            " 'decision', ?, 'old answer', 1, 1, 0, 0.1, 0, NULL)",
            (request_key(old_canonical), old_canonical),
        )
    with caplog.at_level(logging.WARNING, logger="trustsim.llm.store"):
        assert len(ask(api_model(), llm, store).sent) == 0
    assert "1 embedded-model answers were stored before" in caplog.text
    assert len(ask(tiny, llm, store).sent) == 1
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="trustsim.llm.store"):
        assert len(ask(tiny, llm, store).sent) == 0
    assert not caplog.text  # said once, when the store is first opened by this version
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT value FROM meta WHERE name = 'key_version'").fetchone() == (
            str(KEY_VERSION),
        )
        assert conn.execute("SELECT COUNT(*) FROM responses WHERE text = 'old answer'").fetchone() == (1,)


def test_a_read_only_store_without_a_meta_table_still_keys(weights, tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    ask(local_model(weights), parse_llm_config({}), store)
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE meta")
    read_only = RequestStore(store, read_only=True)
    client = LLMClient(local_model(weights), parse_llm_config({"replay_only": True}), read_only, Counting())
    answer = asyncio.run(client.complete(ChatRequest("tiny", MESSAGES, sample=2)))
    assert answer.cached and read_only.meta("key_version") is None


# -- settings that shape the request, in a whole run -------------------------------------------------------
SHAPES = {
    "prompt": "++model.prompt=reference",
    "prompt_compact": "++model.prompt_compact=true",
    "structured_output": "++model.structured_output=none",
    "strict_schema": "++model.strict_schema=false",
    "reasoning_max_chars": "++model.reasoning_max_chars=100",
}


@pytest.mark.slow
def test_settings_that_shape_the_request_send_when_changed(run_job_dir, tmp_path, monkeypatch) -> None:
    """Keyed through the messages and generation settings they produce (an escape-room round)."""
    assert set(SHAPES) == set(keying.MODEL_SHAPES_REQUEST)
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    with FakeServer() as server:
        base = [
            "+experiment=mid2strike",
            "agent=llm",
            "model=openai_compatible",
            f"model.api_base={server.api_base}",
            "model.litellm_model=openai/fake-model",
            "model.api_key_env=TRUSTSIM_TEST_KEY",
            "++model.prompt=trustsim",
            "++model.structured_output=schema",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
            "game.games=1",
            "game.max_rounds=1",
            "game.own_answer=exact",  # decisions only: every request of the job is shaped by these settings
            "game.verifier=exact",
        ]
        assert run_job_dir(base, "base")[0] == 0
        sent = len(server.requests)
        assert sent >= 3
        assert run_job_dir([*base, "llm.max_concurrency=1"], "again")[0] == 0
        assert len(server.requests) == sent  # replayed
        for name, override in SHAPES.items():
            before = len(server.requests)
            assert run_job_dir([*base, override], name)[0] == 0
            assert len(server.requests) == before + sent, name
