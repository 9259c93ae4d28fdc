"""The LLM trust-game player: prompts, answer schemas, parsing, invalid answers (a scripted fake client)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.trust_game.llm_player import LLMTrustPlayer
from agents.trust_game.parse import trustee_parser, trustee_schema, trustor_parser, trustor_schema
from agents.trust_game.prompt import trustee_message, trustor_message
from agents.trust_game.scripted import Fair
from games.trust_game.model import TrustGameModel
from games.trust_game.rules import Stakes
from games.trust_game.types import Exchange, PairInfo, TrusteeView, TrustorView
from trustsim.horizon import Horizon
from trustsim.llm.decision import InvalidAnswer
from trustsim.llm.types import ChatResponse

MODEL = {
    "name": "fake",
    "litellm_model": "openai/fake",
    "structured_output": "schema",
    "reasoning_max_chars": 80,
}


class FakeClient:
    """Returns scripted answers in order and remembers the requests."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.requests: list = []

    async def complete(self, req):  # type: ignore[no-untyped-def]
        self.requests.append(req)
        return ChatResponse(self.answers.pop(0), 10, 5, 0.01, False, 0.0)


def info(role: str = "trustor", horizon: Horizon | None = None, **kw) -> PairInfo:  # type: ignore[no-untyped-def]
    return PairInfo(role, Stakes(10, 10, 3), horizon or Horizon(1), **kw)  # type: ignore[arg-type]


def test_prompts_state_the_rules_neutrally() -> None:
    text = trustor_message(TrustorView(1, (), info()))
    assert "You are the sender" in text and "multiplied by 3" in text and "once" in text
    assert "10 - sent + returned" in text and "trust" not in text.lower()
    past = (Exchange(1, 5, 15, 4), Exchange(2, 6, 18, 9))
    text = trustor_message(TrustorView(3, past, info(horizon=Horizon(10))))
    assert (
        "exactly 10 rounds" in text and "round 3" in text and "1: 5, 15, 4" in text and "2: 6, 18, 9" in text
    )
    text = trustor_message(TrustorView(2, (), info(horizon=Horizon(1, 0.8, known=False))))
    assert "probability 0.8" in text
    pop = info(history="population", population=((0, 2, 0.0), (10, 3, 14.0)))
    assert "10: 3, 14.0" in trustor_message(TrustorView(1, (), pop))
    repeated = TrusteeView(1, 4, 12, (), info("trustee", Horizon(2)))
    text = trustee_message(repeated)
    assert "You are the responder" in text and "sent 4 of 10" in text and "received 12" in text
    assert "p_next_send_at_least" in text and "at least 4 points" in text
    last = TrusteeView(2, 4, 12, (), info("trustee", Horizon(2)))
    assert "p_next_send_at_least" not in trustee_message(last)


def test_schemas_constrain_amounts() -> None:
    s = trustor_schema(10, 3, 80)
    assert (
        s["properties"]["send"]["enum"] == list(range(11)) and s["properties"]["reasoning"]["maxLength"] == 80
    )
    assert list(s["properties"]) == s["required"] and s["required"][0] == "reasoning"
    t = trustee_schema(12, True)
    assert t["properties"]["return"]["enum"] == list(range(13)) and "p_next_send_at_least" in t["required"]
    assert "p_next_send_at_least" not in trustee_schema(12, False)["properties"]
    assert trustor_schema(500, 3)["properties"]["send"] == {"type": "integer", "minimum": 0, "maximum": 500}


def test_parsers() -> None:
    parse = trustor_parser(10, 3)
    ok = parse({"reasoning": "r", "send": 4, "expected_return": 6, "p_return_at_least_sent": 0.6})
    assert (ok.amount.value, ok.expected, ok.p) == (4, 6.0, 0.6)
    odd = parse({"send": "5", "expected_return": 20, "p_return_at_least_sent": 60})
    assert odd.amount.value == 5 and odd.expected is None and odd.expected_error == "out_of_range"
    assert odd.p is None and odd.p_error == "out_of_range"
    with pytest.raises(InvalidAnswer) as bad:
        parse({"send": 3.5, "expected_return": 5, "p_return_at_least_sent": 0.5})
    assert bad.value.reason == "not_an_integer" and bad.value.value.amount.raw == "3.5"
    assert bad.value.value.p == 0.5  # what could still be read is kept
    with pytest.raises(InvalidAnswer, match="missing"):
        parse({"expected_return": 5})
    tparse = trustee_parser(12, True)
    assert tparse({"return": 6, "p_next_send_at_least": 0.9}).p == 0.9
    with pytest.raises(InvalidAnswer, match="out_of_range"):
        tparse({"return": 13})
    assert trustee_parser(12, False)({"return": 2, "p_next_send_at_least": 0.9}).p is None


def _answer(**kw: object) -> str:
    return json.dumps({"reasoning": "because", **kw})


def test_llm_session_records_amounts_confidence_and_invalid_answers() -> None:
    client = FakeClient(
        [
            _answer(send=5, expected_return=6, p_return_at_least_sent=0.7),  # round 1 sender
            _answer(send="half"),  # round 1 sender of pair 2: invalid → 0, responder not asked
            _answer(send=10, expected_return=15, p_return_at_least_sent=0.9),  # round 2 pair 1
            _answer(send=2, expected_return=3, p_return_at_least_sent=0.5),  # round 2 pair 2
        ]
    )
    players = []
    for sample in (1, 2):
        p = LLMTrustPlayer()
        p.bind(client, MODEL, sample)
        players.append((p, Fair()))
    model = TrustGameModel(seed=0, players=players, stakes=Stakes(), horizon=Horizon(2))
    pairs = asyncio.run(model.aplay())
    a, b = (p.exchanges for p in pairs)
    assert [(x.sent, x.returned) for x in a] == [(5, 8), (10, 15)]  # Fair is the trustee
    assert [(x.sent, x.returned) for x in b] == [(0, 0), (2, 3)]
    assert (b[0].trustor.amount.valid, b[0].trustor.amount.raw, b[0].trustor.amount.reason) == (
        False,
        "half",
        "not_an_integer",
    )
    assert b[0].trustor.raw == _answer(send="half") and not b[0].trustee.asked
    assert a[0].trustor.expected == 6 and a[0].trustor.p == 0.7 and a[0].trustor.reasoning == "because"
    req = client.requests[0]
    assert req.model == "fake" and req.sample == 1
    fmt = req.params["response_format"]["json_schema"]
    assert fmt["schema"]["properties"]["send"]["enum"] == list(range(11))
    assert "sender" in req.messages[1]["content"] and "2: " not in req.messages[1]["content"]


def test_unparseable_trustee_answer_resolves_to_zero() -> None:
    client = FakeClient(["no JSON here"])
    p = LLMTrustPlayer(model="other-model")
    p.bind(client, MODEL, 4)
    model = TrustGameModel(seed=0, players=[(Fair(), p)], stakes=Stakes(), horizon=Horizon(1))
    x = asyncio.run(model.aplay())[0].exchanges[0]
    assert (x.sent, x.returned, x.trustee.amount.valid) == (10, 0, False)
    assert x.trustee.amount.reason == "unparseable" and x.trustee.amount.raw == "no JSON here"
    assert client.requests[0].model == "other-model" and p.model_name == "other-model"


def test_llm_player_must_be_bound_and_awaited() -> None:
    with pytest.raises(RuntimeError, match="asynchronous"):
        LLMTrustPlayer().send(TrustorView(1, (), info()))
    with pytest.raises(RuntimeError, match="bind"):
        asyncio.run(LLMTrustPlayer().asend(TrustorView(1, (), info())))
    model = TrustGameModel(seed=0, players=[(LLMTrustPlayer(), Fair())], stakes=Stakes(), horizon=Horizon(1))
    with pytest.raises(RuntimeError, match="aplay"):
        model.play()
