"""The LLM player: answer parsing, prompt, invalid answers, with a scripted fake client."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.arena.llm_player import LLMPlayer
from agents.arena.parse import ANSWER_SCHEMA, parse_answer
from agents.arena.prompt import user_message
from agents.arena.scripted import Defector, TitForTat
from games.arena.model import ArenaModel
from games.arena.rules import Payoffs
from trustsim.horizon import Horizon
from trustsim.llm import parse_model_config
from trustsim.llm.types import ChatResponse

MODEL = {"name": "fake-model", "litellm_model": "openai/fake-model", "structured_output": "schema"}


class FakeClient:
    """Returns scripted answers in order and remembers the requests; ``model`` is its model config."""

    def __init__(self, answers: list[str], **model: object) -> None:
        self.answers = list(answers)
        self.requests: list = []
        self.model = parse_model_config({**MODEL, **model})

    async def complete(self, req):  # type: ignore[no-untyped-def]
        self.requests.append(req)
        return ChatResponse(self.answers.pop(0), 10, 5, 0.01, False, 0.0)


def answer(move: str, p: object, why: str = "because") -> str:
    return json.dumps({"reasoning": why, "move": move, "p_opponent_cooperates": p})


@pytest.mark.parametrize(
    ("text", "move", "p", "move_err", "p_err"),
    [
        (answer("C", 0.8), "C", 0.8, None, None),
        (answer("defect", "0.25"), "D", 0.25, None, None),
        ("```json\n" + answer("D", 0) + "\n```", "D", 0.0, None, None),
        ("Sure! " + answer("C", 1) + " hope that helps", "C", 1.0, None, None),
        (answer("maybe", 0.5), None, 0.5, "bad_move", None),
        (answer("C", 85), "C", None, None, "out_of_range"),
        (answer("C", "high"), "C", None, None, "not_a_number"),
        (json.dumps({"move": "C"}), "C", None, None, "missing"),
        ("I cooperate.", None, None, "unparseable", "unparseable"),
        ("", None, None, "empty", "empty"),
        ('{"reasoning": "cut", "move": "D", "p_opponent_cooperates": 0.3, "x": "abc', "D", 0.3, None, None),
        ('Example {"a": 1}; mine: ' + answer("C", 0.6), "C", 0.6, None, None),
        (answer("C", True), "C", None, None, "not_a_number"),
    ],
)
def test_parse_answer(text: str, move, p, move_err, p_err) -> None:
    got = parse_answer(text)
    assert (got.move, got.p, got.move_error, got.p_error) == (move, p, move_err, p_err)


def test_schema_requires_all_fields() -> None:
    assert set(ANSWER_SCHEMA["required"]) == {"move", "p_opponent_cooperates", "reasoning"}


def _match(client: FakeClient, rounds: int, **kw) -> ArenaModel:
    llm = LLMPlayer()
    llm.bind(client, "fake-model", sample=3)
    return ArenaModel(
        seed=0,
        players=(llm, kw.pop("opponent", TitForTat())),
        payoffs=Payoffs(T=7),
        horizon=Horizon(rounds),
        **kw,
    )


def test_llm_match_records_moves_confidence_and_invalid() -> None:
    client = FakeClient([answer("C", 0.9), "no idea", answer("D", 2.0), answer("C", 0.4)])
    rec = asyncio.run(_match(client, 4, opponent=Defector()).aplay())
    d = [r.decisions["A"] for r in rec.rounds]
    assert [x.move for x in d] == ["C", None, "D", "C"]
    assert [x.p_cooperate for x in d] == [0.9, None, None, 0.4]
    assert d[1].valid is False and d[1].invalid_reason == "unparseable" and d[1].raw == "no idea"
    assert d[2].p_invalid_reason == "out_of_range"
    # invalid answer in round 2 resolves by the default rule: repeat own previous move (C)
    assert rec.rounds[1].intended["A"] == "C"
    req = client.requests[0]
    assert req.model == "fake-model" and req.sample == 3
    assert req.params["response_format"]["json_schema"]["schema"] == ANSWER_SCHEMA


def test_prompt_contents() -> None:
    client = FakeClient([answer("C", 0.5)] * 3)
    m = _match(client, 3, noise=0.1)
    asyncio.run(m.astep())
    asyncio.run(m.astep())
    text = user_message(m.view("A"), history_window=1)
    assert "exactly 3 rounds" in text and "round 3" in text
    assert "7" in text and "tit_for_tat" in text and "noisy" in text
    assert "Rounds 1-1" in text  # older history summarised beyond the window
    anon = _match(FakeClient([]), 3, named=False)
    assert "anonymous" in user_message(anon.view("A"), 5)
    unknown = ArenaModel(
        seed=0,
        players=(TitForTat(), TitForTat()),
        payoffs=Payoffs(),
        horizon=Horizon(50, 0.9, known=False, max_rounds=50),
    )
    assert "probability 0.9" in user_message(unknown.view("A"), 5)


def test_sync_play_refused_and_unbound_player() -> None:
    with pytest.raises(RuntimeError, match="aplay"):
        _match(FakeClient([]), 2).play()
    with pytest.raises(RuntimeError, match="bind"):
        asyncio.run(LLMPlayer().adecide(None))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"structured_output": "json_object"}, {"type": "json_object"}),
        ({"structured_output": "none"}, None),
        ({"structured_output": "schema", "strict_schema": False}, False),
    ],
)
def test_decoding_follows_the_model_config(over: dict, expected: object) -> None:
    client = FakeClient(["Sure: " + answer("D", 0.2)], **over)
    rec = asyncio.run(_match(client, 1).aplay())
    assert rec.rounds[0].decisions["A"].move == "D"
    fmt = client.requests[0].params.get("response_format")
    if expected is False:
        assert fmt["json_schema"]["strict"] is False and fmt["json_schema"]["name"] == "arena_move"
    else:
        assert fmt == expected


def test_player_model_and_no_language_model() -> None:
    client = FakeClient([answer("C", 0.5)])
    p = LLMPlayer(model="openai/other-model")
    p.bind(client, "fake-model", sample=9)
    assert p.model_name == "openai/other-model" and p.sample == 9
    assert p.kit is not None and p.kit.request([], schema=ANSWER_SCHEMA).model == "openai/other-model"
    from trustsim.errors import ConfigError

    with pytest.raises(ConfigError, match="language model"):
        LLMPlayer().bind(object(), "x", model_config={"name": "scripted"})
