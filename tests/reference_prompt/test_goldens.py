"""Reference mode sends exactly the requests the reference study's own code sends.

The goldens in ``goldens/`` were captured by ``make_goldens.py``: the reference code itself
(cyjabc2020/Escape-room-v2 @ 74f0fd1, ``code/src/run_experiment.py``, GPT-5.4 mini settings, direct OpenAI
path) played the games trustsim played, against the fake OpenAI server answering with the scripted model of
``policy.py``, its random draws (puzzles, eliminated seats) replaced by trustsim's. Every request body it
sent is kept as a SHA-256 digest; three whole bodies are kept for readable diffs:

- ``g01_r1_A``: game 1, round 1 (the rules block, no history);
- ``g04_r2``: game 4, round 2, after D's wrong capsule opened a conflict (``Q4-A`` created);
- ``g11_r1_A``: game 11, round 1, a transcript at the 12,000-character cap.

trustsim replays the same command here and must send the same multiset of bodies, byte for byte (messages,
model id and decoding parameters). ``digests_study_default.json`` is the same mid2strike run with the study's
default memory (``master_settings.py``: ``max_allowed`` context, ``evolving`` reflection; trustsim
``memory=transcript_reflection``), reflections included.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.escape_room.reference_memory import ReferenceMemory, window
from tests.reference_prompt.policy import reply
from trustsim.llm.fake_server import FakeServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDENS = HERE / "goldens"
COMMON = ["agent=llm", "model=gpt-5.4-mini", "game.own_answer=llm", "game.verifier=llm", "seed=0"]
SCENARIOS = {
    "mid2strike": ["+experiment=mid2strike"],
    "anchor": ["+experiment=anchor", "runs=1"],
    "study_default": ["+experiment=mid2strike", "memory=transcript_reflection"],
}
REFLECTION = "Based on the following short-term memory and previous reflection"


def digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def run(scenario: str, tmp: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "sk-golden-dummy"}
    with FakeServer(reply=reply) as srv:
        cmd = [
            sys.executable,
            "-m",
            "trustsim",
            *SCENARIOS[scenario],
            *COMMON,
            f"+model.api_base={srv.api_base}",
            f"llm.store_path={tmp / 'store.sqlite'}",
            f"hydra.run.dir={tmp / 'run'}",
        ]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return list(srv.requests)


@pytest.fixture(scope="module")
def mid2strike(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return run("mid2strike", tmp_path_factory.mktemp("mid2strike"))


@pytest.mark.slow
def test_every_mid2strike_request_equals_the_reference_codes(mid2strike: list[dict[str, Any]]) -> None:
    golden = json.loads((GOLDENS / "digests_mid2strike.json").read_text())
    assert len(mid2strike) == len(golden) == 116
    assert sorted(digest(b) for b in mid2strike) == golden


@pytest.mark.parametrize("state", ["g01_r1_A", "g04_r2", "g11_r1_A"])
def test_recorded_states_are_sent_verbatim(mid2strike: list[dict[str, Any]], state: str) -> None:
    golden = json.loads((GOLDENS / f"{state}.json").read_text())
    text = golden["messages"][0]["content"]
    matches = [b for b in mid2strike if b["messages"][0]["content"].startswith(text[:120]) and b == golden]
    assert matches, f"trustsim sent no request equal to the reference's {state}"
    # one user message, no system prompt; the study's decoding for GPT-5.4 mini (openai_helper.py:64-79)
    assert [m["role"] for m in golden["messages"]] == ["user"]
    assert {k: v for k, v in golden.items() if k != "messages"} == {
        "model": "gpt-5.4-mini-2026-03-17",
        "max_completion_tokens": 16384,
        "reasoning_effort": "high",
    }


def test_golden_states_hold_what_they_claim() -> None:
    first = json.loads((GOLDENS / "g01_r1_A.json").read_text())["messages"][0]["content"]
    assert "- Round 1\n" in first and "announcement" not in first and "Welcome to the Escape Room!" in first
    conflict = json.loads((GOLDENS / "g04_r2.json").read_text())["messages"][0]["content"]
    assert "created new capsule Q4-A (conflicting answer)" in conflict and "- Round 2\n" in conflict
    late = json.loads((GOLDENS / "g11_r1_A.json").read_text())["messages"][0]["content"]
    assert "=== GAME 10 ENDED ===" in late and "=== GAME 1 ENDED ===" not in late


@pytest.mark.slow
def test_every_anchor_request_equals_the_reference_codes(tmp_path: Path) -> None:
    """The memoryless anchor: ``current_game_only`` memory, a fresh agent every game (no new-game lines)."""
    golden = json.loads((GOLDENS / "digests_anchor.json").read_text())
    sent = run("anchor", tmp_path)
    assert sorted(digest(b) for b in sent) == golden
    for body in sent:
        assert "NEW GAME STARTED" not in body["messages"][0]["content"]
        assert "ENDED ===" not in body["messages"][0]["content"]


@pytest.mark.slow
def test_every_study_default_request_equals_the_reference_codes(tmp_path: Path) -> None:
    """The study's default memory: 116 decisions, own answers and verifications plus 33 reflections (A, B, C
    after each of 11 games); a game-2 reflection still holds game 1's rules block and events."""
    golden = json.loads((GOLDENS / "digests_study_default.json").read_text())
    sent = run("study_default", tmp_path)
    assert len(sent) == len(golden) == 149
    assert sorted(digest(b) for b in sent) == golden
    texts = [b["messages"][0]["content"] for b in sent]
    reflections = [t for t in texts if t.startswith(REFLECTION)]
    assert len(reflections) == 33
    game2 = [t for t in reflections if "=== GAME 2 ENDED ===" in t and "=== GAME 3 ENDED ===" not in t]
    assert len(game2) == 3
    for text in game2:
        assert text.count("Welcome to the Escape Room!") == 2 and "=== GAME 1 ENDED ===" in text
        assert "[Previous Games Reflection]:\nGames seen ended: 1." in text


def test_memory_horizon_at_game_11_matches_the_reference_algorithm() -> None:
    """Seat A's raw events before its first decision of game 11, and the context the reference's own
    ``Agent.get_context()`` built from them (base_agent.py:152-177): our window equals it, and the oldest
    game still in context is game 5 (games 1-4 are forgotten, although trustsim's old transcript kept
    game 1)."""
    snap = json.loads((GOLDENS / "memory_g11_A.json").read_text())
    events: list[str] = snap["events"]
    assert "\n".join(window(events, 100, 12_000)) == snap["context"]
    mem = ReferenceMemory("max_allowed", 100, 12_000)
    for game, start in sorted((int(g), s) for g, s in snap["game_starts"].items()):
        mem.events = events[:start]
        mem.mark_game(game)
    mem.events = list(events)
    assert mem.context() == snap["context"]
    assert mem.oldest_game_in_context() == 5
