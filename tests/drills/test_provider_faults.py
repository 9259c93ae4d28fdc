"""Whole runs against a misbehaving OpenAI-compatible server: faults are retried, never recorded as moves.

The server's answers depend only on the request, and its faults are drawn per (request, arrival), so a run
against a faulty server must end with the same tables, byte for byte, as a run against a clean one.
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from trustsim.llm.fake_server import FakeServer

from .helpers import TABLES, decisions_recorded, llm_overrides, manifest

GAMES = "game.games=4"


def varied_reply(payload: dict) -> str:
    """A deterministic answer chosen by the request (the reference DECISION form, which every prompt parses)."""
    digest = hashlib.sha256(json.dumps(payload.get("messages"), sort_keys=True).encode()).digest()
    action = f"Verify: Q{1 + digest[1] % 4}" if digest[0] % 3 == 0 else "Pass"
    return f"REASONING: drill answer {digest[2]}\nDECISION: {action}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


PORT = free_port()  # one port for every server of this module: api_base is part of the config


def run(run_job_dir, tmp_path: Path, name: str, mix: dict[str, float] | None, *extra: str):
    with FakeServer(reply=varied_reply, mix=mix, port=PORT) as server:
        code, run_dir = run_job_dir(
            llm_overrides(server.api_base, tmp_path / f"{name}.sqlite", GAMES, *extra), name
        )
        return code, run_dir, server


@pytest.fixture
def clean(run_job_dir, tmp_path):
    code, run_dir, server = run(run_job_dir, tmp_path, "clean", None)
    assert code == 0 and manifest(run_dir)["status"] == "complete"
    assert manifest(run_dir)["llm"]["retries"] == 0
    return run_dir, len(server.requests)


@pytest.mark.parametrize(
    ("name", "mix"),
    [
        ("empty20", {"empty": 0.2}),
        ("null10_empty10", {"null": 0.1, "empty": 0.1}),
        ("rate_limits", {"429": 0.1, "500": 0.05, "drop": 0.05}),
    ],
)
def test_faulty_server_gives_the_clean_tables(name, mix, clean, run_job_dir, tmp_path) -> None:
    clean_dir, clean_requests = clean
    code, run_dir, server = run(run_job_dir, tmp_path, name, mix)
    assert code == 0, manifest(run_dir).get("failure")
    m = manifest(run_dir)
    assert m["status"] == "complete"
    faults = sum(server.faults_served.values())
    assert faults > 0  # the drill did meet faults
    # every fault was retried (one re-send each), and nothing else was sent
    assert len(server.requests) == clean_requests + faults
    assert m["llm"]["retries"] == faults and m["llm"]["calls_sent"] == clean_requests
    for table in TABLES:
        assert (run_dir / table).read_bytes() == (clean_dir / table).read_bytes(), table


def test_only_empty_answers_fail_the_run_and_record_no_decision(run_job_dir, tmp_path) -> None:
    code, run_dir, server = run(run_job_dir, tmp_path, "all_empty", {"empty": 1.0}, "llm.max_retries=2")
    m = manifest(run_dir)
    assert code == 3 and m["status"] == "failed"
    assert "empty provider response" in m["failure"]["reason"]
    assert "re-run" in m["failure"]["resume"]
    assert decisions_recorded(run_dir) == 0
    assert m["llm"]["calls_sent"] == 0 and m["llm"]["retries"] <= 2 * len(server.requests)
    import sqlite3

    conn = sqlite3.connect(tmp_path / "all_empty.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0  # nothing cached as behaviour
    conn.close()


def test_a_rerun_after_empty_answers_resumes_without_replaying_empties(run_job_dir, tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    with FakeServer(reply=varied_reply, mix={"empty": 1.0}) as server:
        code, _ = run_job_dir(llm_overrides(server.api_base, store, GAMES, "llm.max_retries=1"), "broken")
    assert code == 3
    with FakeServer(reply=varied_reply) as server:
        code, run_dir = run_job_dir(llm_overrides(server.api_base, store, GAMES), "fixed")
    assert code == 0 and manifest(run_dir)["llm"]["cache_hits"] == 0
    decisions = (run_dir / "decisions.csv").read_text()
    assert "empty answer" not in decisions


def test_hang_and_5_mb_answer_are_survived(run_job_dir, tmp_path) -> None:
    with FakeServer(reply=varied_reply) as server:
        server.script("hang", "big")
        code, run_dir = run_job_dir(
            llm_overrides(
                server.api_base,
                tmp_path / "s.sqlite",
                "game.games=1",
                "llm.timeout_s=1",
                "game.own_answer=exact",  # the scripted faults hit decisions (the subject), not own answers
                "game.verifier=exact",
            ),
            "run",
        )
    m = manifest(run_dir)
    assert code == 0 and m["status"] == "complete" and m["llm"]["retries"] == 1
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    raws = [e.get("raw") or "" for e in events if e["type"] == "decision"]
    assert any(r.startswith("A 5 MB answer") for r in raws)  # recorded, as behaviour (invalid) ...
    assert max(len(r) for r in raws) <= 25_000  # ... and cut
