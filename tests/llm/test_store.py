"""The request store as cache, replay log and audit trail."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from trustsim.llm import ChatRequest, ReplayMissError, build_client
from trustsim.llm.store import RequestStore, StoredResponse, canonical_request, request_key

from .helpers import llm_dict, model_dict


def req(text: str, sample: int = 0, **params: object) -> ChatRequest:
    return ChatRequest(
        model="fake", messages=[{"role": "user", "content": text}], params=params, sample=sample
    )


def test_key_depends_on_every_part_of_the_request() -> None:
    base = ("m", None, [{"role": "user", "content": "x"}], {"temperature": 0}, 0)
    keys = {request_key(canonical_request(*base))}
    keys.add(request_key(canonical_request("m2", *base[1:])))
    keys.add(request_key(canonical_request("m", "http://h", *base[2:])))
    keys.add(request_key(canonical_request("m", None, [{"role": "user", "content": "y"}], *base[3:])))
    keys.add(request_key(canonical_request("m", None, base[2], {"temperature": 1}, 0)))
    keys.add(request_key(canonical_request(*base[:4], 1)))
    assert len(keys) == 6
    # dict order does not matter
    assert canonical_request("m", None, [], {"a": 1, "b": 2}, 0) == canonical_request(
        "m", None, [], {"b": 2, "a": 1}, 0
    )


def test_second_identical_request_is_served_from_store(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base)

    async def run():
        first = await client.complete(req("a"))
        second = await client.complete(req("a"))
        other_sample = await client.complete(req("a", sample=1))
        return first, second, other_sample

    first, second, other = asyncio.run(run())
    assert not first.cached and second.cached and not other.cached
    assert second.text == first.text and second.prompt_tokens == first.prompt_tokens
    assert second.latency_s == first.latency_s  # the original latency is kept for identical tables
    assert len(fake_server.requests) == 2
    assert client.stats()["calls_sent"] == 2 and client.stats()["cache_hits"] == 1


def test_new_client_on_same_store_sends_nothing(fake_server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    store = tmp_path / "s.sqlite"

    async def run_all() -> list[str]:
        client = build_client(model_dict(fake_server.api_base), llm_dict(store))
        out = await asyncio.gather(*(client.complete(req(f"q{i}")) for i in range(5)))
        stats = client.stats()
        await client.aclose()
        return [r.text for r in out], stats

    texts1, stats1 = asyncio.run(run_all())
    sent = len(fake_server.requests)
    texts2, stats2 = asyncio.run(run_all())
    assert texts1 == texts2
    assert len(fake_server.requests) == sent == 5
    assert stats1["calls_sent"] == 5 and stats2["calls_sent"] == 0 and stats2["cache_hits"] == 5


def test_concurrent_identical_requests_send_once(fake_server, make_client) -> None:
    fake_server.delay_s = 0.1
    client = make_client(fake_server.api_base)

    async def run():
        return await asyncio.gather(*(client.complete(req("same")) for _ in range(4)))

    out = asyncio.run(run())
    assert len(fake_server.requests) == 1
    assert sum(not r.cached for r in out) == 1 and len({r.text for r in out}) == 1


def test_replay_only_refuses_to_send(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, replay_only=True)
    with pytest.raises(ReplayMissError, match="replay_only"):
        asyncio.run(client.complete(req("never sent")))
    assert fake_server.requests == []


def test_cache_off_resends(fake_server, make_client) -> None:
    client = make_client(fake_server.api_base, cache=False)

    async def run():
        await client.complete(req("a"))
        await client.complete(req("a"))

    asyncio.run(run())
    assert len(fake_server.requests) == 2


def test_purpose_selects_param_group_and_request_overrides(make_client) -> None:
    client = make_client("http://127.0.0.1:9/v1")
    _, _, decision = client.route(req("x"))
    _, _, solve = client.route(ChatRequest("fake", [], purpose="solve"))
    _, _, override = client.route(req("x", max_tokens=5))
    assert decision["max_tokens"] == 64 and solve["max_tokens"] == 8 and override["max_tokens"] == 5
    assert solve["temperature"] == 0.0


def test_store_is_wal_and_audit_row_has_request_without_secret(fake_server, make_client, tmp_path) -> None:
    client = make_client(fake_server.api_base)
    asyncio.run(client.complete(req("audit me")))
    conn = sqlite3.connect(tmp_path / "store.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    model, request, purpose = conn.execute("SELECT model, request, purpose FROM responses").fetchone()
    body = json.loads(request)
    assert model == "openai/fake-model" and purpose == "decision"
    assert body["messages"][0]["content"] == "audit me" and body["api_base"] == fake_server.api_base
    assert "sk-test-not-a-real-key" not in request


def test_store_round_trips_non_utf8_and_huge_text(tmp_path) -> None:
    store = RequestStore(tmp_path / "s.sqlite")
    text = "\ud800 bad surrogate " + "x" * 2_000_000
    from trustsim.llm.transport import sanitize_text

    clean = sanitize_text(text)
    store.put(
        "k",
        model="m",
        api_base=None,
        sample=0,
        purpose="decision",
        canonical="{}",
        response=StoredResponse(clean, 1, 2, 0.0, 0.5),
    )
    got = store.get("k")
    assert got is not None and got.text == clean and len(got.text) > 2_000_000
    assert sanitize_text(b"\xff\xfe ok") == "\ufffd\ufffd ok"


def test_litellm_mock_response_path_records_tokens_and_cost(tmp_path) -> None:
    model = {
        "name": "gpt-4o",
        "litellm_model": "openai/gpt-4o",
        "params": {"mock_response": '{"action": "pass"}'},
    }
    client = build_client(model, llm_dict(tmp_path / "s.sqlite"))
    resp = asyncio.run(client.complete(ChatRequest("gpt-4o", [{"role": "user", "content": "hi"}])))
    assert resp.text == '{"action": "pass"}' and resp.completion_tokens > 0
    assert resp.cost_usd > 0 and client.stats()["cost_usd"] == pytest.approx(
        resp.cost_usd
    )  # litellm price table
