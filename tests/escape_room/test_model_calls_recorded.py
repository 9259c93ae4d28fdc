"""The escape room's model calls that are not decisions (a verification's solve with ``game.verifier=llm``, a
seat's own answer with ``game.own_answer=llm``, a reflection between games) are recorded on their events with
their raw text and request-store key, as decisions are."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import run_in_process
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_CALLS_TEST_KEY"
REFLECTION = "D was wrong once: verify Q4 next game."


def reply(body: dict) -> str:
    """A puzzle call answers 7 (right only by chance), a reflection one sentence, a decision verify Q4."""
    text = body["messages"][-1]["content"]
    if text.endswith("Reply with the integer answer only."):
        return "The answer is 7."
    if "Write a reflection of at most" in text:
        return REFLECTION
    return json.dumps({"action": "verify", "target": 4, "confidence": {"Q4": 0.5}, "reasoning": "check D"})


def events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def test_verifications_own_answers_and_reflections_name_their_requests(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-calls-test-not-a-key")
    store = tmp_path / "store.sqlite"
    with FakeServer(reply=reply) as server:
        code = run_in_process(
            [
                "+experiment=mid2strike",
                "agent=llm",
                "agent.prompt=trustsim",
                "memory=reflection",
                "model=openai_compatible",
                f"model.api_base={server.api_base}",
                "model.litellm_model=openai/fake-model",
                f"model.api_key_env={KEY_ENV}",
                f"llm.store_path={store}",
                "game.games=2",
                "game.own_answer=llm",
                "game.verifier=llm",
            ],
            tmp_path / "run",
        )
    assert code == 0
    log = events(tmp_path / "run")
    calls = {
        kind: [e for e in log if e["type"] == kind] for kind in ("own_answer", "verification", "reflection")
    }
    # three model seats: an own answer each per game, a verification each per round, a reflection after game 1
    # and game 2
    assert len(calls["own_answer"]) == 3 * 2
    assert calls["verification"] and all("request" in e for e in calls["verification"])
    assert len(calls["reflection"]) == 3 * 2
    purposes = {"own_answer": "own_answer", "verification": "solve", "reflection": "reflection"}
    with sqlite3.connect(store) as conn:
        for kind, found in calls.items():
            for event in found:
                row = conn.execute(
                    "SELECT text, purpose FROM responses WHERE key = ?", (event["request"],)
                ).fetchone()
                assert row == (event["raw"], purposes[kind]), (kind, event)
    assert {e["answer"] for e in calls["own_answer"] + calls["verification"]} == {7}
    assert {e["raw"] for e in calls["reflection"]} == {REFLECTION}
    # the own-answer events follow their game's start, the reflections precede its end
    types = [e["type"] for e in log if e.get("game") == 1]
    assert types[1:4] == ["own_answer"] * 3
    assert types[-4:] == ["reflection"] * 3 + ["game_end"]
    # the sealed capsules hold the recorded own answers
    start = next(e for e in log if e["type"] == "game_start" and e["game"] == 1)
    for e in calls["own_answer"][:3]:
        assert start["sealed"][f"Q{e['puzzle']}-{e['seat']}"] == e["answer"]
