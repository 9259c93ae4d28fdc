"""Prompt caching: cached prompt tokens recorded (events, store, decisions.csv) and priced (litellm's cache
prices, ``model.price``), Anthropic's stable prefix marked with ``model.prompt_cache``, old stores replayed."""

from __future__ import annotations

import asyncio
import csv
import json
import sqlite3

import pytest

from trustsim import api
from trustsim.errors import ConfigError
from trustsim.llm import ChatRequest
from trustsim.llm.budget import call_cost
from trustsim.llm.caching import CACHE_CONTROL, mark_stable_prefix
from trustsim.llm.config import parse_model_config
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.pricing import price_of
from trustsim.llm.store import RequestStore, StoredResponse
from trustsim.llm.transport import CallResult, get_litellm

from .helpers import client_of, llm_dict, model_dict

USAGE = {
    "openai/gpt-5.1": {"prompt_tokens_details": {"cached_tokens": 2000}},
    "anthropic/claude-sonnet-4-6": {"cache_read_input_tokens": 2000, "cache_creation_input_tokens": 500},
}


def _mocked(model_id: str) -> object:
    """litellm's own response object with a usage as the provider reports it (3,000 prompt tokens, 100
    completion tokens, 2,000 read from the cache; Anthropic: 500 written to it)."""
    from litellm import ModelResponse, Usage

    usage = Usage(prompt_tokens=3000, completion_tokens=100, total_tokens=3100, **USAGE[model_id])
    choice = {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    return ModelResponse(choices=[choice], usage=usage, model=model_id.split("/", 1)[1])


@pytest.mark.parametrize("model_id", list(USAGE))
def test_cached_tokens_are_recorded_and_priced_at_litellm_s_cache_prices(model_id, tmp_path, monkeypatch):
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    model = model_dict(litellm_model=model_id, params={"mock_response": _mocked(model_id)})
    client = client_of(model, llm_dict(tmp_path / "s.sqlite"), job="j")
    resp = asyncio.run(client.complete(ChatRequest("fake", [{"role": "user", "content": "q"}])))
    written = 500 if model_id.startswith("anthropic") else 0
    assert (resp.prompt_tokens, resp.cached_tokens, resp.cache_write_tokens) == (3000, 2000, written)
    info = get_litellm().model_cost[model_id.split("/", 1)[1]]
    expected = (
        (3000 - 2000 - written) * info["input_cost_per_token"]
        + 2000 * info["cache_read_input_token_cost"]
        + written * (info.get("cache_creation_input_token_cost") or 0)
        + 100 * info["output_cost_per_token"]
    )
    uncached = 3000 * info["input_cost_per_token"] + 100 * info["output_cost_per_token"]
    assert resp.cost_usd == pytest.approx(expected) and expected < uncached
    price = price_of(parse_model_config(model))  # preview's price: the same figures from the map
    assert price.cost(3000, 100, 2000, written) == pytest.approx(expected)
    assert client.stats()["cached_tokens"] == 2000
    client.store.close()
    again = RequestStore(tmp_path / "s.sqlite", read_only=True)
    row = again._conn.execute("SELECT cached_tokens, cache_write_tokens, cost_usd FROM responses").fetchone()
    assert row[:2] == (2000, written) and row[2] == pytest.approx(expected)
    again.close()


def test_a_configured_price_prices_cache_reads_and_writes():
    price = {
        "input_per_mtok": 10,
        "output_per_mtok": 40,
        "cache_read_per_mtok": 1,
        "cache_write_per_mtok": 12.5,
    }
    model = parse_model_config(model_dict(price=price))
    assert call_cost(model, 0.0, 3_000_000, 1_000_000, 2_000_000, 500_000) == pytest.approx(
        0.5 * 10 + 2 * 1 + 0.5 * 12.5 + 1 * 40
    )
    plain = parse_model_config(model_dict(price={"input_per_mtok": 10, "output_per_mtok": 40}))
    assert call_cost(plain, 0.0, 3_000_000, 0, 2_000_000) == pytest.approx(30)  # no cache price: input price


def test_cached_tokens_reach_events_decisions_csv_and_the_manifest(tmp_path, monkeypatch):
    """A provider that caches repeated prefixes (the fake server's OpenAI-style cache) in a job whose prompts
    grow (transcript memory): cached tokens per decision, priced at model.price's cache read price."""
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    with FakeServer(prompt_cache=True) as srv:
        result = api.run(
            "mid2strike",
            [
                "agent=llm",
                "agent.prompt=trustsim",
                "model=openai_compatible",
                f"model.api_base={srv.api_base}",
                "model.api_key_env=TRUSTSIM_TEST_KEY",
                "+model.price={input_per_mtok: 10, output_per_mtok: 40, cache_read_per_mtok: 1}",
                f"llm.store_path={tmp_path / 's.sqlite'}",
            ],
            run_dir=tmp_path / "run",
        )
    assert result.status == "complete"
    rows = list(csv.DictReader((tmp_path / "run" / "decisions.csv").open()))
    llm_rows = [r for r in rows if r["is_partner"] == "false"]
    cached = [int(r["cached_tokens"]) for r in llm_rows]
    assert max(cached) >= 1024 and all(
        c <= int(r["prompt_tokens"]) for c, r in zip(cached, llm_rows, strict=True)
    )
    events = [e for e in result.events() if e["type"] == "decision" and "raw" in e]
    assert [e["cached_tokens"] for e in events] == cached
    llm = result.manifest["llm"]
    assert llm["cached_tokens"] == sum(cached)
    expected = (
        (llm["prompt_tokens"] - sum(cached)) * 10 + sum(cached) * 1 + llm["completion_tokens"] * 40
    ) / 1e6
    assert llm["cost_usd"] == pytest.approx(expected)


def test_prompt_cache_marks_the_stable_prefix_of_anthropic_requests(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    sent: list[list[dict]] = []

    async def transport(model, messages, params, **kw) -> CallResult:
        sent.append(messages)
        return CallResult("ok", 10, 1, 0.0, 0.0)

    model = parse_model_config(model_dict(litellm_model="anthropic/claude-sonnet-4-6", prompt_cache=True))
    from trustsim.llm.client import LLMClient
    from trustsim.llm.config import parse_llm_config

    client = LLMClient(model, parse_llm_config(llm_dict(tmp_path / "s.sqlite")), None, transport=transport)
    messages = [{"role": "system", "content": "RULES"}, {"role": "user", "content": "MEMORY\nround 3"}]
    asyncio.run(client.complete(ChatRequest("fake", messages, stable_chars=7)))
    asyncio.run(client.complete(ChatRequest("fake", messages)))  # no stable prefix declared (reference style)
    assert sent[0] == [
        {"role": "system", "content": [{"type": "text", "text": "RULES", "cache_control": CACHE_CONTROL}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "MEMORY\n", "cache_control": CACHE_CONTROL},
                {"type": "text", "text": "round 3"},
            ],
        },
    ]
    assert sent[1] == messages and mark_stable_prefix(messages, 0) is messages


def test_prompt_cache_is_for_anthropic_models():
    with pytest.raises(
        ConfigError, match=r"config error at 'model\.prompt_cache': applies to Anthropic models"
    ):
        parse_model_config(model_dict(litellm_model="openai/gpt-5.1", prompt_cache=True))


def test_a_store_from_before_cache_tokens_replays_read_only_and_migrates(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, api_base TEXT, sample INTEGER NOT "
        "NULL, purpose TEXT NOT NULL, request TEXT NOT NULL, text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,"
        " completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, latency_s REAL NOT NULL, created REAL "
        "NOT NULL, job TEXT)"
    )
    conn.execute(
        "INSERT INTO responses VALUES ('k', 'm', NULL, 0, 'decision', '{}', 'hi', 5, 1, 0.1, 0.2, 0, 'j')"
    )
    conn.commit()
    conn.close()
    old = RequestStore(path, read_only=True)
    assert old.get("k") == StoredResponse("hi", 5, 1, 0.1, 0.2, 0, 0)
    old.close()
    store = RequestStore(path)  # writable: migrated, the old row kept
    assert store.get("k") == StoredResponse("hi", 5, 1, 0.1, 0.2, 0, 0)
    store.put(
        "k2", model="m", api_base=None, sample=0, purpose="decision", canonical="{}",
        response=StoredResponse("yo", 9, 2, 0.3, 0.1, 4, 1),
    )  # fmt: skip
    assert store.get("k2") == StoredResponse("yo", 9, 2, 0.3, 0.1, 4, 1)
    version = store._conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0]
    store.close()
    assert json.loads(version) == 3
