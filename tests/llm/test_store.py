"""The request store as cache, replay log and audit trail."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim.llm import ChatRequest, ReplayMissError, StoreError
from trustsim.llm.store import RequestStore, StoredResponse, canonical_request, request_key

from .helpers import REPO, client_of, llm_dict, model_dict, read_only


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
        client = client_of(model_dict(fake_server.api_base), llm_dict(store))
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
    asyncio.run(make_client(fake_server.api_base).aclose())  # an (empty) store exists
    client = make_client(fake_server.api_base, replay_only=True)
    with pytest.raises(ReplayMissError, match="replay_only") as info:
        asyncio.run(client.complete(req("never sent")))
    assert fake_server.requests == []
    assert info.value.exit_code == 4 and "cannot help" in info.value.resume
    assert "re-run the same command" not in info.value.resume + str(info.value)


def test_replay_only_without_a_store_is_a_config_error(fake_server, make_client) -> None:
    with pytest.raises(StoreError) as info:
        make_client(fake_server.api_base, replay_only=True)
    assert info.value.key == "llm.store_path" and "no request store" in str(info.value)


BUILD = """
import asyncio, json, sys
from trustsim.llm import ChatRequest, build_client, parse_llm_config, parse_model_config
from trustsim.errors import TrustsimError
model = json.loads(sys.argv[1])
llm = {"store_path": sys.argv[2], "replay_only": sys.argv[3] == "1", "max_retries": 0}
try:
    client = build_client(parse_model_config(model), parse_llm_config(llm))
    out = [asyncio.run(client.complete(ChatRequest("fake", [{"role": "user", "content": t}]))).text
           for t in sys.argv[4:]]
    print(json.dumps({"ok": out}))
except TrustsimError as exc:
    print(json.dumps({"error": type(exc).__name__, "key": getattr(exc, "key", None), "msg": str(exc),
                      "resume": getattr(exc, "resume", "")}))
"""


def _build(prefix: list[str], api_base: str, store: Path, replay: bool, *texts: str) -> dict:
    model = json.dumps(model_dict(api_base, api_key_env=None))
    done = subprocess.run(
        [*prefix, sys.executable, "-c", BUILD, model, str(store), "1" if replay else "0", *texts],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_store_path_under_a_file_is_a_config_error(tmp_path, monkeypatch) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "store.sqlite"
    with pytest.raises(StoreError) as info:
        client_of(model_dict("http://127.0.0.1:9/v1", api_key_env=None), llm_dict(path))
    assert info.value.key == "llm.store_path" and str(path) in str(info.value)
    assert "is a file, not a folder" in info.value.resume and "replay_only" not in info.value.resume


def test_read_only_store_fails_to_write_but_replays_with_replay_only(fake_server, tmp_path) -> None:
    folder = tmp_path / "ro"
    store = folder / "store.sqlite"
    client = client_of(model_dict(fake_server.api_base, api_key_env=None), llm_dict(store))
    first = asyncio.run(client.complete(req("stored")))
    asyncio.run(client.aclose())
    with read_only(folder) as prefix:
        new_store = _build(prefix, fake_server.api_base, folder / "new.sqlite", False, "x")
        writing = _build(prefix, fake_server.api_base, store, False, "stored")
        replay = _build(prefix, fake_server.api_base, store, True, "stored")
        miss = _build(prefix, fake_server.api_base, store, True, "not stored")
    for out in (new_store, writing):  # writing is impossible: said at start, naming the key
        assert out.get("error") == "StoreError" and out["key"] == "llm.store_path", out
        assert "replay_only" in out["resume"]
    assert replay == {"ok": [first.text]}
    assert miss["error"] == "ReplayMissError" and "cannot help" in miss["resume"]
    assert len(fake_server.requests) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["store.sqlite"]  # nothing written next to it


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
    assert "temperature" not in solve  # a purpose's group replaces the decision params (no merge)


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
    client = client_of(model, llm_dict(tmp_path / "s.sqlite"))
    resp = asyncio.run(client.complete(ChatRequest("gpt-4o", [{"role": "user", "content": "hi"}])))
    assert resp.text == '{"action": "pass"}' and resp.completion_tokens > 0
    assert resp.cost_usd > 0 and client.stats()["cost_usd"] == pytest.approx(
        resp.cost_usd
    )  # litellm price table
