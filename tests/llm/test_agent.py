"""The LLM agent with a scripted client: prompt contents, recorded fields, solve, reflection memory."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents.escape_room.base import Services
from agents.escape_room.llm_agent import LLMAgent
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
    agent.start_session("A", np.random.default_rng(5), Services(llm=client, model=MODEL, game={"coins": 4}))
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
    assert asyncio.run(agent.asolve(puzzle)) == 42
    assert asyncio.run(agent.asolve(puzzle)) == 17
    assert asyncio.run(agent.asolve(puzzle)) is None
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
