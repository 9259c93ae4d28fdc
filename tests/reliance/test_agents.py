"""Answer parsing and the LLM agent's conversation, with a scripted fake client."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.reliance.llm_agent import LLMAgent
from agents.reliance.parse import parse_answer
from games.reliance.items import Item
from games.reliance.model import RelianceModel, Services
from games.reliance.solver import solve
from trustsim.llm.types import ChatResponse
from trustsim.seeding import Seeder

ACTIONS = ("delegate_P", "delegate_P_audited", "backup")
MODEL = {
    "name": "fake",
    "litellm_model": "openai/fake",
    "structured_output": "schema",
    "reasoning_max_chars": 90,
}


@pytest.mark.parametrize(
    ("text", "action", "conf", "reason"),
    [
        ('{"action": "backup", "confidence": 0.7, "reasoning": "r"}', "backup", 0.7, ""),
        ('Sure! {"action": " Delegate_P ", "confidence": "80%"}', "delegate_P", 0.8, ""),
        ('{"action": "delegate_P_audited", "confidence": 1.5}', "delegate_P_audited", None, ""),
        ("", None, None, "empty"),
        ("I would back up.", None, None, "unparseable"),
        ('{"confidence": 0.5}', None, 0.5, "empty_action"),
        ('{"action": "delegate_P or backup"}', None, None, "ambiguous"),
        ('{"action": ["backup", "delegate_P"]}', None, None, "ambiguous"),
        ('{"action": "delegate_Q"}', None, None, "illegal_action"),
        ('{"action": "backup", "confidence": 0.8, "reasoning": "ANA: ANA: AN', "backup", 0.8, ""),
        ('no json here "action": "backup"', None, None, "unparseable"),
    ],
)
def test_parse_answer(text, action, conf, reason):
    p = parse_answer(text, ACTIONS)
    assert p.action == action
    assert p.confidence == conf
    assert p.invalid_reason == reason


class FakeClient:
    """Answers with a fixed policy and records every request."""

    def __init__(self, answer):
        self.answer = answer
        self.requests = []

    async def complete(self, req):
        self.requests.append(req)
        text = self.answer(req)
        return ChatResponse(text, 10, 5, 0.01, False, 0.0)


def _play(lib, sid, client, show_posterior=False, model=MODEL):
    scn = lib.scenario(sid)
    model = RelianceModel(
        seed=1,
        item=Item(sid, "main", scn),
        item_index=1,
        solution=lib.solution(sid),
        policy=LLMAgent(),
        feedback=Seeder("t"),
        show_posterior=show_posterior,
        services=Services(llm=client, model=model, sample=7),
        base_row={
            "run_id": "r",
            "session": 0,
            "set": "main",
            "agent": "llm",
            "model": "fake",
            "show_posterior": show_posterior,
        },
    )
    return asyncio.run(model.play())


def test_llm_conversation_grows_and_uses_the_json_schema(lib):
    def answer(req):
        enum = req.params["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
        return json.dumps({"action": enum[0], "confidence": 0.6, "reasoning": "first listed"})

    client = FakeClient(answer)
    rows = _play(lib, "worked_example", client)
    assert [r["action"] for r in rows] == ["delegate", rows[1]["action"]]
    assert len(client.requests) == 2
    first, second = client.requests
    assert first.messages[0]["role"] == "system" and "Rules" in first.messages[1]["content"]
    assert len(second.messages) == 4 and second.messages[2]["role"] == "assistant"
    assert "Stage 1 result" in second.messages[3]["content"]
    assert "Exact posterior" not in second.messages[3]["content"]
    fmt = first.params["response_format"]
    assert fmt["json_schema"]["name"] == "reliance_decision" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["properties"]["reasoning"]["maxLength"] == 90
    assert first.sample == second.sample == 7


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"structured_output": "json_object"}, {"type": "json_object"}),
        ({"structured_output": "none"}, None),
        ({"structured_output": "schema", "strict_schema": False}, False),
    ],
)
def test_decoding_follows_the_model_config(lib, over, expected):
    client = FakeClient(lambda req: 'Here: {"action": "delegate", "confidence": 0.7, "reasoning": "x"}')
    rows = _play(lib, "worked_example", client, model={**MODEL, **over})
    assert rows[0]["valid"] and rows[0]["action"] == "delegate"
    fmt = client.requests[0].params.get("response_format")
    if expected is False:
        assert fmt["json_schema"]["strict"] is False
    else:
        assert fmt == expected


def test_no_language_model_is_a_config_error(lib):
    from trustsim.errors import ConfigError

    with pytest.raises(ConfigError, match="language model"):
        _play(lib, "worked_example", FakeClient(lambda req: ""), model={"name": "scripted"})


def test_empty_and_truncated_answers(lib):
    client = FakeClient(lambda req: "")
    rows = _play(lib, "worked_example", client)
    assert len(rows) == 1 and rows[0]["invalid_reason"] == "empty" and rows[0]["confidence"] is None
    cut = FakeClient(lambda req: '{"action": "delegate", "confidence": 0.6, "reasoning": "the budget ran ou')
    rows = _play(lib, "worked_example", cut)
    assert rows[0]["valid"] and rows[0]["action"] == "delegate" and rows[0]["confidence"] == 0.6


def test_support_variant_adds_the_exact_posterior(lib):
    client = FakeClient(lambda req: '{"action": "delegate", "confidence": 0.7, "reasoning": "x"}')
    _play(lib, "worked_example", client, show_posterior=True)
    text = client.requests[0].messages[1]["content"]
    assert "Exact posterior" in text and "P(good) = 0.700" in text
    later = client.requests[1].messages[-1]["content"]
    assert "P(good) = 0.725" in later or "P(good) = 0.350" in later


def test_illegal_answer_ends_the_trajectory(lib):
    client = FakeClient(lambda req: '{"action": "pray", "confidence": 0.9}')
    rows = _play(lib, "worked_example", client)
    assert len(rows) == 1 and not rows[0]["valid"] and rows[0]["invalid_reason"] == "illegal_action"
    assert rows[0]["confidence"] == 0.9 and rows[0]["regret"] is None


def test_solve_is_deterministic(lib):
    scn = lib.scenario("route_mountain_van.delayed")
    a, b = solve(scn), solve(scn)
    assert [n.v for n in a.nodes] == [n.v for n in b.nodes]
