"""``llm.budget_usd``: spend priced per call and recorded per request; a run stops at the cap and resumes."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from tests.llm.helpers import client_of, llm_dict, model_dict
from trustsim.llm import BudgetReached, ChatRequest
from trustsim.llm.budget import EXIT_BUDGET, call_cost
from trustsim.llm.config import parse_model_config
from trustsim.llm.fake_server import FakeServer

PRICE = "+model.price={input_per_mtok: 100, output_per_mtok: 400}"


def test_call_cost_order_price_then_local_then_litellm() -> None:
    priced = parse_model_config(model_dict(price={"input_per_mtok": 2.0, "output_per_mtok": 8.0}))
    assert call_cost(priced, 0.5, 1_000_000, 500_000) == pytest.approx(6.0)  # the config's price wins
    assert call_cost(parse_model_config(model_dict()), 0.5, 10, 10) == 0.5  # litellm's price map
    assert call_cost(parse_model_config(model_dict()), 0.0, 10, 10) == 0.0  # unknown to the map: 0
    local = parse_model_config({"name": "l", "litellm_model": "trustsim/x", "provider": "local"})
    assert call_cost(local, 0.5, 10, 10) == 0.0


def test_at_the_cap_calls_in_flight_finish_and_are_stored_then_it_stops(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    with FakeServer(delay_s=0.3, reply="ok") as server:  # each answer: 1 completion token = $1
        model = model_dict(server.api_base, price={"input_per_mtok": 0, "output_per_mtok": 1_000_000})
        client = client_of(model, llm_dict(tmp_path / "s.sqlite", budget_usd=2.5, max_concurrency=4))

        async def go() -> None:
            reqs = [ChatRequest("fake", [{"role": "user", "content": f"q{i}"}]) for i in range(12)]
            try:
                await asyncio.gather(*(client.complete(r) for r in reqs))
            finally:
                await client.aclose()

        with pytest.raises(BudgetReached, match=r"budget reached: this job's spend is \$\d") as caught:
            asyncio.run(go())
        sent = len(server.requests)
    assert caught.value.exit_code == EXIT_BUDGET == 6
    rows, spend = (
        sqlite3.connect(tmp_path / "s.sqlite")
        .execute("SELECT COUNT(*), SUM(cost_usd) FROM responses")
        .fetchone()
    )
    assert rows == sent  # every request sent was answered and stored, none cut off
    assert 3 <= sent <= 6  # the 3rd dollar reaches the cap; at most 4 in flight then
    assert spend == pytest.approx(sent) and spend >= 2.5


def overrides(server: FakeServer, store: Path, *extra: str) -> list[str]:
    return [
        "+experiment=mid2strike", "agent=llm", "model=openai_compatible", f"model.api_base={server.api_base}",
        "model.litellm_model=openai/fake-model", "model.api_key_env=null", PRICE, f"llm.store_path={store}",
        "game.games=2", "progress=false", *extra,
    ]  # fmt: skip


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def stored(store: Path) -> tuple[int, float, set[str]]:
    conn = sqlite3.connect(store)
    n, spend = conn.execute("SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM responses").fetchone()
    messages = {
        json.dumps(json.loads(r)["messages"], sort_keys=True)
        for (r,) in conn.execute("SELECT request FROM responses")
    }
    conn.close()
    return n, spend, messages


@pytest.mark.slow
def test_run_stops_at_the_cap_and_a_higher_cap_completes_without_resending(run_job_dir, tmp_path) -> None:
    store = tmp_path / "store.sqlite"
    with FakeServer() as server:
        code, run = run_job_dir(overrides(server, store, "llm.budget_usd=0.05"), "capped")
        m = manifest(run)
        assert code == EXIT_BUDGET and m["status"] == "failed"
        assert m["failure"]["reason"].startswith("budget reached") and m["failure"]["type"] == "BudgetReached"
        assert (
            "llm.budget_usd" in m["failure"]["resume"] and "re-run the same command" in m["failure"]["resume"]
        )
        n, spend, before = stored(store)
        assert n == len(server.requests) > 0 and spend >= 0.05  # every sent request is stored, with its cost
        assert m["llm"]["cost_usd"] == pytest.approx(spend)
        # the same cap again: this job's recorded spend already reached it, so nothing is sent
        code, _ = run_job_dir(overrides(server, store, "llm.budget_usd=0.05"), "again")
        assert code == EXIT_BUDGET and len(server.requests) == n
        code, run = run_job_dir(overrides(server, store, "llm.budget_usd=100"), "raised")
        assert code == 0 and manifest(run)["status"] == "complete"
        resent = {json.dumps(r["messages"], sort_keys=True) for r in server.requests[n:]}
        assert resent and not (resent & before)  # stored requests were replayed, not sent again
        assert manifest(run)["llm"]["cache_hits"] == n
        total = len(server.requests)
        code, _ = run_job_dir(overrides(server, store, "llm.budget_usd=0.01"), "replayed")
        assert code == 0 and len(server.requests) == total  # a full replay costs nothing: under any cap


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["file", "shards"])
def test_store_scope_caps_the_spend_of_every_job_in_the_store(run_job_dir, tmp_path, layout) -> None:
    store = tmp_path / "store.sqlite"
    extra = [f"llm.store_dir={tmp_path / 'shards'}"] if layout == "shards" else []
    with FakeServer() as server:
        code, _ = run_job_dir(overrides(server, store, "seed=1", *extra), "first")
        assert code == 0
        if layout == "shards":
            (shard,) = (tmp_path / "shards").glob("*.sqlite")
            store = shard
        _, spend, _ = stored(store)
        cap = f"llm.budget_usd={spend * 1.5}"  # above one job's spend, below two jobs'
        code, run = run_job_dir(overrides(server, store, "seed=2", cap, *extra), "job_scope")  # its own spend
        assert code == 0
        sent = len(server.requests)
        code, run = run_job_dir(
            overrides(server, store, "seed=3", cap, "llm.budget_scope=store", *extra), "store"
        )
        assert code == EXIT_BUDGET and len(server.requests) == sent  # the sweep's spend is over the cap
        assert "spend recorded in the request store" in manifest(run)["failure"]["reason"]


def test_budget_keys_are_validated(run_job_dir, tmp_path) -> None:
    code, run = run_job_dir(["agent=llm", "llm.budget_usd=-1"], "neg")
    assert code == 2 and "llm.budget_usd" in manifest(run)["failure"]["reason"]
    code, run = run_job_dir(["agent=llm", "llm.budget_scope=sweep"], "scope")
    assert code == 2 and "llm.budget_scope" in manifest(run)["failure"]["reason"]


def test_clients_sharing_a_store_share_the_cap_and_wait_for_each_other(tmp_path, monkeypatch) -> None:
    """A mixed team: seat clients share the job's store; a seat reaching the cap waits for another seat's
    call in flight, which is stored."""
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    dollar = {"input_per_mtok": 0, "output_per_mtok": 1_000_000}
    llm = llm_dict(tmp_path / "s.sqlite", budget_usd=1.5)
    with FakeServer(reply="ok") as fast, FakeServer(delay_s=1.0, reply="ok") as slow:
        a = client_of(model_dict(fast.api_base, name="a", price=dollar), llm, job="j" * 64)
        b = client_of(model_dict(slow.api_base, name="b", price=dollar), llm, job="j" * 64, store=a.store)

        async def go() -> None:
            slow_call = asyncio.create_task(b.complete(ChatRequest("b", [{"role": "user", "content": "b1"}])))
            await asyncio.sleep(0.1)
            try:
                for i in range(5):
                    await a.complete(ChatRequest("a", [{"role": "user", "content": f"a{i}"}]))
            except BudgetReached:
                assert slow_call.done() and not slow_call.exception()  # waited for the other seat's call
                raise
            finally:
                b.store = None  # shared: closed once, by a
                await a.aclose()

        with pytest.raises(BudgetReached):
            asyncio.run(go())
        assert len(fast.requests) == 2 and len(slow.requests) == 1
    texts = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT COUNT(*), SUM(cost_usd) FROM responses")
    assert texts.fetchone() == (3, 3.0)  # a0, a1 and b1: all stored, all paid
