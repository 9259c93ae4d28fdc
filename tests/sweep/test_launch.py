"""Every job of a sweep in one process (trustsim.launch, the core of ``hydra/launcher=trustsim``): tables as
one-at-a-time runs, endpoint limits shared by the jobs (counted at the server), a 429 storm, failures apart."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from trustsim import api
from trustsim.errors import ConfigError
from trustsim.job import run_job
from trustsim.launch import run_jobs
from trustsim.llm import client
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.transport import call_litellm

from .helpers import KEY, KEY_ENV, job, llm_overrides, manifest, reply, tables


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def _rows(store) -> int:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_tables_are_byte_identical_to_jobs_run_one_at_a_time(tmp_path):
    with FakeServer(reply=reply, delay_s=0.01) as srv:

        def variants(store):
            return [
                ["+experiment=smooth", *llm_overrides(srv, store, "runs=2")],
                ["+experiment=1strike", *llm_overrides(srv, store, "runs=2", model="openai/other")],
                ["+experiment=1strike", "agent=bayes", "game.games=2"],  # a scripted job in the same sweep
            ]

        together = [job(n, v, tmp_path / "sweep") for n, v in enumerate(variants(tmp_path / "a.sqlite"))]
        assert run_jobs(together, progress=False) == [0, 0, 0]
        sent_together = len(srv.requests)
        for n, overrides in enumerate(variants(tmp_path / "b.sqlite")):  # a fresh store: sent again
            assert run_job(api.compose(None, overrides), tmp_path / "alone" / f"{n:03d}", overrides) == 0
        assert len(srv.requests) == 2 * sent_together > 0
    for n in range(3):
        one, alone = tmp_path / "sweep" / f"{n:03d}", tmp_path / "alone" / f"{n:03d}"
        assert manifest(one)["status"] == "complete" and manifest(one)["run_id"] == manifest(alone)["run_id"]
        assert tables(one) and tables(one) == tables(alone), n


@pytest.mark.slow
def test_jobs_share_their_endpoint_s_rate_counted_at_the_server(tmp_path):
    """Two jobs, one endpoint limited to 600 requests/min: together they stay within it (the server accepts
    20 per 2 s per model and refuses none); apart, each would have sent at 600/min."""
    with FakeServer(reply=reply, rate_limit=20, rate_window_s=2.0) as srv:
        store = tmp_path / "store.sqlite"
        jobs = [
            job(
                n,
                [f"+experiment={e}", *llm_overrides(srv, store, "runs=2", "llm.requests_per_minute=600")],
                tmp_path,
            )
            for n, e in enumerate(("smooth", "1strike"))
        ]
        assert run_jobs(jobs, progress=False) == [0, 0]
    assert len(srv.requests) > 20 and srv.rate_limited == 0
    assert srv.most_in_window("fake") <= 20
    assert _rows(store) == len(srv.requests)


@pytest.mark.slow
def test_the_rate_holds_from_the_first_request_of_a_sweep(tmp_path, monkeypatch):
    """Two jobs at 240 requests/min against a server that takes 20 per rolling 5 s (30/min per 60 s scaled
    down), the first call slow to leave as in a fresh process (litellm's import, its HTTP client): not one
    refusal, and no 5 s with more than 20 requests."""
    sent = []

    async def slow_first(*args, **kwargs):
        if not sent:
            await asyncio.sleep(1.0)
        sent.append(1)
        return await call_litellm(*args, **kwargs)

    monkeypatch.setattr(client, "call_litellm", slow_first)
    with FakeServer(reply=reply, rate_limit=20, rate_window_s=5.0) as srv:
        store = tmp_path / "store.sqlite"
        extra = ("game.games=1", "llm.requests_per_minute=240", "llm.max_retries=0")
        jobs = [
            job(n, [f"+experiment={e}", *llm_overrides(srv, store, *extra)], tmp_path)
            for n, e in enumerate(("smooth", "1strike"))
        ]
        assert run_jobs(jobs, progress=False) == [0, 0]
    assert len(srv.requests) > 20 and srv.rate_limited == 0
    assert srv.most_in_window("fake") <= 20


@pytest.mark.slow
def test_a_429_storm_completes_with_every_answer_stored_once(tmp_path):
    """The server accepts 10 requests per 2 s per model while the jobs may send 1,200/min: Retry-After pauses
    the endpoint, its window halves, and every request is answered and stored once within a small retry
    budget (429s of a busy endpoint do not use it up)."""
    with FakeServer(reply=reply, rate_limit=10, rate_window_s=2.0) as srv:
        store = tmp_path / "store.sqlite"
        extra = ("runs=2", "llm.requests_per_minute=1200", "llm.max_retries=2")
        jobs = [
            job(n, [f"+experiment={e}", *llm_overrides(srv, store, *extra)], tmp_path)
            for n, e in enumerate(("smooth", "1strike"))
        ]
        assert run_jobs(jobs, progress=False) == [0, 0]
    answered = len(srv.requests) - srv.rate_limited
    assert srv.rate_limited > 0 and srv.most_in_window("fake") <= 10
    assert _rows(store) == answered  # every answer stored, none twice
    stats = [manifest(tmp_path / f"{n:03d}")["llm"] for n in range(2)]
    assert sum(s["calls_sent"] for s in stats) == answered
    assert sum(s["rate_limited"] for s in stats) == srv.rate_limited


def test_a_failing_job_does_not_stop_the_others(tmp_path):
    with FakeServer(reply=reply) as srv:
        srv.script("401")  # the first request is refused: its job fails (exit 3), the others go on
        jobs = [
            job(
                n,
                [f"+experiment={e}", *llm_overrides(srv, tmp_path / "s.sqlite", "llm.max_retries=0")],
                tmp_path,
            )
            for n, e in enumerate(("smooth", "1strike", "2strike"))
        ]
        codes = run_jobs(jobs, progress=False)
    assert sorted(codes) == [0, 0, 3]
    failed = [manifest(tmp_path / f"{n:03d}") for n, code in enumerate(codes) if code]
    assert failed[0]["status"] == "failed" and "401" in failed[0]["failure"]["reason"]


def test_a_job_with_a_bad_value_is_refused_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match="config error at 'seed'"):
        job(0, ["+experiment=smooth", "agent=bayes", "seed=-1"], tmp_path)
