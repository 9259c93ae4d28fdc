"""The LLM agent with a scripted client: prompt contents, recorded fields, solve, reflection memory."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents.escape_room.base import Services
from agents.escape_room.llm_agent import LLMAgent
from games.escape_room.options import EscapeRoomGame
from games.escape_room.types import Action, GameSummary, Puzzle
from trustsim.errors import ConfigError
from trustsim.llm import ChatRequest, ChatResponse

from .test_memory import obs, report

MODEL = {
    "name": "fake",
    "litellm_model": "openai/fake",
    "structured_output": "schema",
    "reasoning_max_chars": 50,
}


class ScriptedClient:
    """Answers from a list, records every request."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[ChatRequest] = []

    async def complete(self, req: ChatRequest) -> ChatResponse:
        self.requests.append(req)
        return ChatResponse(self.answers.pop(0), 120, 30, 0.25, False, 0.0)


def agent_with(client: ScriptedClient, memory: str = "transcript") -> LLMAgent:
    agent = LLMAgent(memory=memory)
    agent.start_session(
        "A", np.random.default_rng(5), Services(llm=client, model=MODEL, game=EscapeRoomGame(coins=4))
    )
    return agent


def test_decision_records_raw_parse_confidence_and_accounting() -> None:
    client = ScriptedClient(
        '{"action": "verify", "target": 4, "confidence": {"Q1": 1.0, "Q4": 0.35}, "reasoning": "check D"}'
    )
    agent = agent_with(client)
    o = obs(1)
    agent.start_game(o)
    d = asyncio.run(agent.adecide(o))
    assert d.action == Action.verify(4) and d.confidence == {1: 1.0, 4: 0.35} and d.reasoning == "check D"
    assert d.raw_text.startswith('{"action"') and d.parse_error is None
    assert (d.latency_s, d.prompt_tokens, d.completion_tokens, d.cached) == (0.25, 120, 30, False)
    req = client.requests[0]
    assert req.purpose == "decision" and req.model == "fake"
    system, user = req.messages[0]["content"], req.messages[1]["content"]
    assert "verify" in system and "4 coins" in system and "confidence" in system
    assert "You are player A" in user and "What is 2 + 3?" in user and "Q4 (owner D): Q4-D [D]" in user
    assert req.params["response_format"]["type"] == "json_schema"


def test_unparseable_answer_is_an_invalid_decision_with_raw_text() -> None:
    agent = agent_with(ScriptedClient("I refuse to answer in JSON."))
    o = obs(1)
    agent.start_game(o)
    d = asyncio.run(agent.adecide(o))
    assert d.action is None and d.raw_text == "I refuse to answer in JSON." and d.parse_error
    assert d.confidence == {}  # a missing confidence still yields prediction rows with p empty


def test_memory_reaches_the_next_games_prompt_and_forget_drops_it() -> None:
    client = ScriptedClient('{"action": "pass"}', '{"action": "pass"}', '{"action": "pass"}')
    agent = agent_with(client)
    o1 = obs(1)
    agent.start_game(o1)
    asyncio.run(agent.adecide(o1))
    r = report(1, True, False)
    agent.observe(r)
    summary = GameSummary(
        1, False, 1, ("A",), dict.fromkeys("ABCD", 4), dict.fromkeys("ABCD", 0), 0, "A", (r,)
    )
    asyncio.run(agent.aend_game(summary))
    agent.start_game(obs(2))
    asyncio.run(agent.adecide(obs(2)))
    assert "Memory from earlier play" in client.requests[1].messages[1]["content"]
    assert "Game 1 ended" in client.requests[1].messages[1]["content"]
    agent.forget()
    agent.start_game(obs(3))
    asyncio.run(agent.adecide(obs(3)))
    assert "Memory from earlier play" not in client.requests[2].messages[1]["content"]


def test_reflection_is_a_model_call_that_replaces_the_memory() -> None:
    client = ScriptedClient('{"reflection": "D lied once; verify Q4."}', '{"action": "pass"}')
    agent = agent_with(client, memory="reflection")
    agent.start_game(obs(1))
    summary = GameSummary(1, True, 1, ("A",), dict.fromkeys("ABCD", 4), dict.fromkeys("ABCD", 4), 4, "A", ())
    asyncio.run(agent.aend_game(summary))
    assert client.requests[0].purpose == "reflection"
    agent.start_game(obs(2))
    asyncio.run(agent.adecide(obs(2)))
    assert "D lied once; verify Q4." in client.requests[1].messages[1]["content"]


def test_solve_is_stateless_and_short() -> None:
    client = ScriptedClient('{"answer": 42}', "It is 17.", "no idea")
    agent = agent_with(client)
    puzzle = Puzzle(2, "What is 6 x 7?", 42)
    assert asyncio.run(agent.asolve(puzzle)).answer == 42
    assert asyncio.run(agent.asolve(puzzle)).answer == 17
    assert asyncio.run(agent.asolve(puzzle)).answer is None
    req = client.requests[0]
    assert req.purpose == "solve" and len(req.messages) == 1 and "6 x 7" in req.messages[0]["content"]


def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="memory must be one of"):
        LLMAgent(memory="all")
    with pytest.raises(ValueError, match="transcript_max_chars"):
        LLMAgent(transcript_max_chars=0)
    agent = LLMAgent()
    with pytest.raises(ConfigError, match="model=smollm2"):
        agent.start_session("A", np.random.default_rng(0), Services(llm=object(), model={"name": "scripted"}))


def reference_agent(client: ScriptedClient, memory: str = "transcript") -> LLMAgent:
    agent = LLMAgent(memory=memory, prompt="reference")
    agent.start_session(
        "A", np.random.default_rng(5), Services(llm=client, model=MODEL, game=EscapeRoomGame(coins=4))
    )
    return agent


def test_reference_decision_is_one_user_message_parsed_as_the_study() -> None:
    client = ScriptedClient("Thinking.\nDECISION: Verify: Q4\nREASONING: D is unverified.", "I have no idea.")
    agent = reference_agent(client)
    o = obs(1)
    agent.start_game(o)
    d = asyncio.run(agent.adecide(o))
    req = client.requests[0]
    assert [m["role"] for m in req.messages] == ["user"] and "response_format" not in req.params
    assert d.action == Action.verify(4) and d.reasoning == "D is unverified." and d.confidence == {}
    assert agent.ref.events[-2:] == [
        "My reasoning Round 1: Thinking.\nDECISION: Verify: Q4\nREASONING: D is unverified.",
        "My action Round 1: Verify: Q4",
    ]
    d2 = asyncio.run(agent.adecide(o))  # no DECISION line, no keyword: the study played Pass
    assert d2.action is None and "reference plays Pass" in d2.parse_error
    assert agent.ref.events[-1] == "My action Round 1: Pass"


def test_reference_reflection_uses_the_study_prompt_and_block() -> None:
    client = ScriptedClient("DECISION: Pass\nREASONING: wait.", "  Verify Q4 early.  ", "DECISION: Pass")
    agent = reference_agent(client, memory="reflection")
    o = obs(1)
    agent.start_game(o)
    asyncio.run(agent.adecide(o))
    agent.observe(report(1, True, True))
    r = report(1, True, True)
    s = GameSummary(
        1, True, 1, tuple("ABCD"), dict.fromkeys("ABCD", 3), dict.fromkeys("ABCD", 3), 3, "A", (r,)
    )
    asyncio.run(agent.aend_game(s))
    reflection = client.requests[1]
    assert reflection.purpose == "reflection" and reflection.messages[0]["content"].startswith(
        "Based on the following short-term memory and previous reflection, create a concise reflection"
    )
    assert "=== GAME 1 ENDED ===\nOutcome: SUCCESS\nWinner: C" in reflection.messages[0]["content"]
    agent.start_game(obs(2))
    asyncio.run(agent.adecide(obs(2)))
    prompt = client.requests[2].messages[0]["content"]
    assert "[Previous Games Reflection]:\nVerify Q4 early." in prompt
    assert "My reasoning Round 1: DECISION: Pass" not in prompt  # current_game_only: game 1 is gone
    assert "========== NEW GAME STARTED ==========" in prompt  # a persistent agent's new-game lines


def play_reference_game(agent: LLMAgent, game: int) -> None:
    o = obs(game)
    agent.start_game(o)
    asyncio.run(agent.adecide(o))
    r = report(game, True, True)
    agent.observe(r)
    s = GameSummary(
        game, True, 1, tuple("ABCD"), dict.fromkeys("ABCD", 3), dict.fromkeys("ABCD", 3), 3, "A", (r,)
    )
    asyncio.run(agent.aend_game(s))


@pytest.mark.parametrize("memory", ["transcript_reflection", "reflection"])
def test_reference_study_default_memory_keeps_earlier_games_beside_the_reflection(memory: str) -> None:
    """The study's default (``max_allowed`` + ``evolving``): seat A's game-2 reflection still holds game 1's
    rules block and events, then game 2's, then the game-1 reflection; ``current_game_only`` drops game 1."""
    client = ScriptedClient(
        "DECISION: Pass\nREASONING: g1.", "Verify Q4.", "DECISION: Pass\nREASONING: g2.", "R2"
    )
    agent = reference_agent(client, memory=memory)
    play_reference_game(agent, 1)
    play_reference_game(agent, 2)
    assert [r.purpose for r in client.requests] == ["decision", "reflection", "decision", "reflection"]
    text = client.requests[3].messages[0]["content"]
    g1, g2 = (
        "My reasoning Round 1: DECISION: Pass\nREASONING: g1.",
        "My reasoning Round 1: DECISION: Pass\nREASONING: g2.",
    )
    rules = "Welcome to the Escape Room!"
    if memory == "transcript_reflection":
        assert agent.ref.mode == "max_allowed" and agent.ref.evolving
        assert text.count(rules) == 2 and text.count("=== GAME 1 ENDED ===") == 1
        order = [text.index(rules), text.index(g1), text.index("NEW GAME STARTED"), text.index(g2)]
        assert order == sorted(order) and "=== GAME 2 ENDED ===" in text
        assert text.index("[Previous Games Reflection]:\nVerify Q4.") > text.index("=== GAME 2 ENDED ===")
        assert rules in client.requests[2].messages[0]["content"].split("NEW GAME STARTED")[0]
    else:
        assert agent.ref.mode == "current_game_only" and text.count(rules) == 1
        assert g1 not in text and g2 in text and "[Previous Games Reflection]:\nVerify Q4." in text


def test_reference_sub_prompts_and_purposes() -> None:
    client = ScriptedClient('"42"', "The answer is 17.")
    agent = reference_agent(client)
    puzzle = Puzzle(2, "What is 6 x 7?", 42)
    assert asyncio.run(agent.asolve(puzzle, purpose="own_answer")).answer == 42
    assert asyncio.run(agent.asolve(puzzle)).answer == 17
    own, verify = client.requests
    assert own.purpose == "own_answer" and own.messages[0]["content"].startswith("You are given a puzzle")
    assert verify.purpose == "solve" and verify.messages[0]["content"].startswith("You are verifying")


def test_reference_prompt_refuses_ledger_memory() -> None:
    agent = LLMAgent(memory="ledger", prompt="reference")
    with pytest.raises(ConfigError, match="ledger"):
        agent.start_session(
            "A", np.random.default_rng(0), Services(llm=object(), model=MODEL, game=EscapeRoomGame())
        )


def test_trustsim_announcements_list_passes_only_when_asked() -> None:
    for announce, shown in ((False, False), (True, True)):
        client = ScriptedClient('{"action": "pass"}', '{"action": "pass"}')
        agent = LLMAgent()
        game = EscapeRoomGame(coins=4, announce_passes=announce)
        agent.start_session("A", np.random.default_rng(5), Services(llm=client, model=MODEL, game=game))
        agent.start_game(obs(1))
        asyncio.run(agent.adecide(obs(1)))
        agent.observe(report(1, True, None))
        asyncio.run(agent.adecide(obs(1)))
        user = client.requests[1].messages[1]["content"]
        assert "A Verify: Q4" in user and ("D Pass" in user) is shown and ("B Pass" in user) is shown
