"""The LLM decision kit: decoding decided once per model config, robust JSON extraction, invalid answers
as behaviour, provider faults as exceptions, and the same decoding for a model in every game."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from trustsim.errors import ConfigError
from trustsim.llm import ChatRequest, ChatResponse, ProviderError, parse_model_config
from trustsim.llm.decision import (
    MAX_PARSE_CHARS,
    DecisionKit,
    Decoding,
    InvalidAnswer,
    extract_json,
    required_keys,
    salvage_fields,
)

from .helpers import model_dict

SCHEMA = {
    "type": "object",
    "properties": {"move": {"type": "string", "enum": ["C", "D"]}, "p": {"type": "number"}},
    "required": ["move", "p"],
    "additionalProperties": False,
}
CONF = Path(__file__).resolve().parents[2] / "conf" / "model"
REFERENCE = (
    "gpt-5.1",
    "gpt-5.4-mini",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "gemini-3.1-pro",
    "gemini-2.5-flash",
)


class Scripted:
    """A client answering from a list (or raising), recording requests."""

    def __init__(self, *answers: str | Exception, model: Any = None) -> None:
        self.answers = list(answers)
        self.requests: list[ChatRequest] = []
        if model is not None:
            self.model = model

    async def complete(self, req: ChatRequest) -> ChatResponse:
        self.requests.append(req)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ChatResponse(answer, 11, 7, 0.5, True, 0.001)


def parse_move(obj: dict[str, Any]) -> tuple[str, float | None]:
    move = obj.get("move")
    p = obj.get("p") if isinstance(obj.get("p"), int | float) else None
    if move not in ("C", "D"):
        raise InvalidAnswer("bad_move", value=(None, p))
    return move, p


def kit_for(client: Scripted, **model: Any) -> DecisionKit:
    return DecisionKit(client, model_dict(**model), sample=42)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- decoding, decided once per model config --------------------------------------------------------------
@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"structured_output": "schema"}, {"type": "json_schema", "strict": True}),
        ({"structured_output": "schema", "strict_schema": False}, {"type": "json_schema", "strict": False}),
        ({"structured_output": "json_object"}, {"type": "json_object"}),
        ({"structured_output": "none"}, None),
        ({}, None),  # the default: unconstrained
    ],
)
def test_response_format_follows_the_model_config(over: dict, expected: dict | None) -> None:
    kit = kit_for(Scripted(), **over)
    req = kit.request([{"role": "user", "content": "go"}], schema=SCHEMA, name="arena_move")
    fmt = req.params.get("response_format")
    if expected is None:
        assert fmt is None
    elif expected["type"] == "json_schema":
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"] == {"name": "arena_move", "schema": SCHEMA, "strict": expected["strict"]}
    else:
        assert fmt == expected
    # free text is never constrained, whatever the model config says
    text = kit.request([{"role": "user", "content": "go"}], format="text")
    assert "response_format" not in text.params
    assert req.sample == text.sample == 42 and req.model == "fake"


def test_kit_takes_the_client_model_and_refuses_no_model() -> None:
    cfg = parse_model_config(model_dict(structured_output="json_object"))
    kit = DecisionKit(Scripted(model=cfg))
    assert kit.decoding == Decoding("json_object", True) and kit.model is cfg
    with pytest.raises(ConfigError, match=r"'model'.*language model"):
        DecisionKit(Scripted(), {"name": "scripted"})
    with pytest.raises(ConfigError, match=r"model\.strict_schema"):
        DecisionKit(Scripted(), model_dict(strict_schema="yes"))
    with pytest.raises(ValueError, match="schema"):
        kit.request([{"role": "user", "content": "x"}], format="json")
    with pytest.raises(ValueError, match="format"):
        kit.request([{"role": "user", "content": "x"}], schema=SCHEMA, format="xml")  # type: ignore[arg-type]


def test_with_sample_and_per_call_overrides() -> None:
    client = Scripted('{"move": "C", "p": 0.5}', '{"move": "D", "p": 0.5}')
    kit = kit_for(client, structured_output="schema")
    other = kit.with_sample(7)
    run(other.decide([{"role": "user", "content": "a"}], parse_move, schema=SCHEMA, params={"seed": 3}))
    run(kit.decide([{"role": "user", "content": "a"}], parse_move, schema=SCHEMA, sample=9, purpose="solve"))
    first, second = client.requests
    assert (first.sample, second.sample, kit.sample) == (7, 9, 42)
    assert first.params["seed"] == 3 and "seed" not in second.params
    assert second.purpose == "solve"


# -- answers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value", "reason"),
    [
        ('{"move": "C", "p": 0.8}', ("C", 0.8), None),
        ('Sure!\n```json\n{"move": "D", "p": 0.1}\n```\nDone.', ("D", 0.1), None),
        ('I think {"move": "C", "p": 1} is right', ("C", 1), None),
        ('{"move": "X", "p": 0.3}', (None, 0.3), "bad_move"),
        ('{"p": 0.4, "reasoning": "a long text that was cut', (None, 0.4), "bad_move"),
        ('{"move": "D", "p": 0.2, "reasoning": "cut here', ("D", 0.2), None),
        ("", None, "empty"),
        ("   \n", None, "empty"),
        ("I cooperate, obviously.", None, "unparseable"),
    ],
)
def test_decide_parses_or_records_invalid(text: str, value: Any, reason: str | None) -> None:
    client = Scripted(text)
    answer = run(kit_for(client).decide([{"role": "user", "content": "go"}], parse_move, schema=SCHEMA))
    assert (answer.value, answer.invalid_reason, answer.valid) == (value, reason, reason is None)
    assert answer.raw == text and answer.decoding == "none" and answer.sample == 42
    assert (answer.prompt_tokens, answer.completion_tokens, answer.latency_s, answer.cached) == (
        11,
        7,
        0.5,
        True,
    )
    assert answer.cost_usd == 0.001


def test_text_format_hands_the_text_to_the_parser() -> None:
    def parse(text: str) -> str:
        for line in text.splitlines():
            if line.startswith("DECISION:"):
                return line.split(":", 1)[1].strip()
        raise InvalidAnswer("no_decision_line")

    client = Scripted("REASONING: cheap\nDECISION: Verify: Q4", "just chatting")
    kit = kit_for(client, structured_output="schema")
    ok = run(kit.decide([{"role": "user", "content": "go"}], parse, format="text"))
    bad = run(kit.decide([{"role": "user", "content": "go"}], parse, format="text"))
    assert ok.valid and ok.value == "Verify: Q4" and ok.decoding == "text"
    assert not bad.valid and bad.invalid_reason == "no_decision_line" and bad.raw == "just chatting"
    assert all("response_format" not in r.params for r in client.requests)


def test_provider_faults_stay_exceptions() -> None:
    client = Scripted(ProviderError("HTTP 401", model="fake", attempts=1))
    with pytest.raises(ProviderError, match="401"):
        run(kit_for(client).decide([{"role": "user", "content": "go"}], parse_move, schema=SCHEMA))


# -- JSON extraction -----------------------------------------------------------------------------------
def test_extract_prefers_the_object_with_the_schema_keys() -> None:
    text = 'Example: {"a": 1}. My answer: {"move": "C"} and finally {"move": "D", "p": 0.5}'
    assert extract_json(text, ("move", "p")) == {"move": "D", "p": 0.5}
    assert extract_json('{"a": 1} then {"move": "C"}', ("move", "p")) == {"move": "C"}
    assert extract_json('{"a": 1} {"b": 2}', ("move",)) == {"a": 1}
    assert extract_json("no object") is None
    assert extract_json('{"reasoning": "tab\tinside", "move": "C"}', ("move",))["move"] == "C"


def test_required_keys_of_variants() -> None:
    variant = {"type": "object", "required": ["action", "confidence"]}
    schema = {"oneOf": [variant, {**variant, "required": ["action", "target", "confidence"]}]}
    assert required_keys(schema) == ("action", "confidence")
    assert required_keys(SCHEMA) == ("move", "p") and required_keys(None) == ()


def test_salvage_only_from_an_opened_object() -> None:
    assert salvage_fields('{"action": "backup", "confidence": 0.8, "reasoning": "ANA: AN') == {
        "action": "backup",
        "confidence": 0.8,
    }
    assert salvage_fields('```json\n{"move": "C", "reasoning": "x') == {"move": "C"}
    assert salvage_fields('no json "action": "backup"') is None


def test_hostile_text_is_bounded() -> None:
    import time

    start = time.perf_counter()
    assert extract_json("```{" * 12_500) is None  # a backtracking fence regex took ~25 s here
    assert extract_json("```json\n{" * 6_000 + '```json\n{"move": "C"}\n```', ("move",)) is None
    assert time.perf_counter() - start < 5.0  # an upper bound that only catches quadratic work
    deep = "[" * 100_000 + "]" * 100_000
    braces = "{" * 200_000
    assert extract_json(deep) is None
    assert extract_json(braces) is None
    big = '{"move": "C", "p": 0.5}' + " " * (MAX_PARSE_CHARS + 10) + '{"move": "D"}'
    assert extract_json(big, ("move", "p")) == {"move": "C", "p": 0.5}
    nested = '{"move": ' + "[" * 5000 + "]" * 5000 + "}"
    answer = run(
        kit_for(Scripted(nested)).decide([{"role": "user", "content": "x"}], parse_move, schema=SCHEMA)
    )
    assert not answer.valid


# -- through the real client and the fake OpenAI-compatible server --------------------------------------
def test_kit_through_the_client_and_the_wire(fake_server, make_client) -> None:
    fake_server.reply = json.dumps({"move": "D", "p": 0.25})
    fake_server.script("500", "ok")
    client = make_client(
        fake_server.api_base, model=model_dict(fake_server.api_base, structured_output="schema")
    )

    async def go() -> Any:
        kit = DecisionKit(client, sample=5)
        answer = await kit.decide([{"role": "user", "content": "move?"}], parse_move, schema=SCHEMA)
        again = await kit.decide([{"role": "user", "content": "move?"}], parse_move, schema=SCHEMA)
        rerun = DecisionKit(client, sample=5)  # a re-run of the same seat: the same draws
        replay = [
            await rerun.decide([{"role": "user", "content": "move?"}], parse_move, schema=SCHEMA)
            for _ in range(2)
        ]
        await client.aclose()
        return answer, again, replay

    answer, again, replay = run(go())
    assert answer.valid and answer.value == ("D", 0.25) and not answer.cached and answer.sample == 5
    assert not again.cached and again.sample == 6  # the same seat asking again: a new draw, sent
    assert [r.cached for r in replay] == [True, True] and [r.sample for r in replay] == [5, 6]
    body = fake_server.requests[-1]
    assert body["response_format"]["json_schema"]["strict"] is True
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert len(fake_server.requests) == 3  # one 500 retried, the repeat; the re-run from the store


def test_client_fault_after_retries_is_an_exception(fake_server, make_client) -> None:
    fake_server.script("400")
    client = make_client(fake_server.api_base)

    async def go() -> None:
        try:
            await DecisionKit(client).decide([{"role": "user", "content": "x"}], parse_move, schema=SCHEMA)
        finally:
            await client.aclose()

    with pytest.raises(ProviderError):
        run(go())


# -- one model, one decoding, in every game -------------------------------------------------------------
@pytest.mark.parametrize("name", REFERENCE)
def test_reference_models_decode_unconstrained(name: str) -> None:
    cfg = parse_model_config(yaml.safe_load((CONF / f"{name}.yaml").read_text()))
    assert (cfg.structured_output, cfg.strict_schema) == ("none", True)
    kit = DecisionKit(Scripted(), cfg)
    assert "response_format" not in kit.request([{"role": "user", "content": "x"}], schema=SCHEMA).params


def _decoding(req: ChatRequest) -> tuple[str, bool | None] | None:
    fmt = req.params.get("response_format")
    if fmt is None:
        return None
    return fmt["type"], fmt.get("json_schema", {}).get("strict")


def _game_requests(cfg: dict[str, Any]) -> dict[str, ChatRequest]:
    """One decision request of each game's LLM agent under this model config."""
    from types import SimpleNamespace

    import numpy as np

    from agents.arena.llm_player import LLMPlayer
    from agents.arena.scripted import TitForTat
    from agents.reliance.llm_agent import LLMAgent as RelianceAgent
    from agents.trust_game.llm_player import LLMTrustPlayer
    from agents.trust_game.scripted import Fair
    from games.arena.model import ArenaModel
    from games.arena.rules import Payoffs
    from games.trust_game.model import TrustGameModel
    from games.trust_game.rules import Stakes
    from trustsim.horizon import Horizon

    out: dict[str, ChatRequest] = {}
    reliance = Scripted('{"action": "a", "confidence": 0.5, "reasoning": "r"}')
    agent = RelianceAgent()
    agent.start_item(np.random.default_rng(0), SimpleNamespace(llm=reliance, model=cfg, sample=1))
    run(agent.adecide(SimpleNamespace(prompt="choose", actions=("a", "b"))))
    out["reliance"] = reliance.requests[0]
    arena = Scripted('{"reasoning": "r", "move": "C", "p_opponent_cooperates": 0.5}')
    player = LLMPlayer()
    player.bind(arena, sample=1, model_config=cfg)
    model = ArenaModel(seed=0, players=(player, TitForTat()), payoffs=Payoffs(), horizon=Horizon(1))
    run(model.aplay())
    out["arena"] = arena.requests[0]
    trust = Scripted('{"reasoning": "r", "send": 5, "expected_return": 6, "p_return_at_least_sent": 0.5}')
    sender = LLMTrustPlayer()
    sender.bind(trust, cfg, 1)
    game = TrustGameModel(seed=0, players=[(sender, Fair())], stakes=Stakes(), horizon=Horizon(1))
    run(game.aplay())
    out["trust_game"] = trust.requests[0]
    return out


LLM_CONFIGS = [p for p in sorted(CONF.glob("*.yaml")) if "litellm_model" in p.read_text()]


def test_every_language_model_config_is_checked() -> None:
    assert {p.stem for p in LLM_CONFIGS} >= {*REFERENCE, "smollm2", "vllm", "ollama", "openai_compatible"}


@pytest.mark.parametrize("path", LLM_CONFIGS, ids=lambda p: p.stem)
def test_one_model_decodes_the_same_way_in_every_game(path: Path) -> None:
    cfg = yaml.safe_load(path.read_text())
    expected = _decoding(DecisionKit(Scripted(), cfg).request([], schema=SCHEMA))
    requests = _game_requests(cfg)
    assert {game: _decoding(req) for game, req in requests.items()} == dict.fromkeys(requests, expected)
