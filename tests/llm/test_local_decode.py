"""Schema-guided decoding of the embedded model (trustsim/llm/local_decode.py) and its token accounting."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from omegaconf import OmegaConf

from agents.escape_room.llm_prompt import SOLVE_SCHEMA, decision_messages, decision_schema, rules_text
from trustsim.llm.local_decode import Choice, FreeNumber, FreeString, Sampler, Unsupported, plan

from .test_memory import obs

REPO = Path(__file__).resolve().parents[2]


# -- no model needed -----------------------------------------------------------------------------------
def test_plan_forces_the_fixed_text_and_samples_only_choices() -> None:
    steps = plan(decision_schema(obs(1), 80))
    assert steps[0] == '{"action": ' and isinstance(steps[1], Choice)
    choice = steps[1]
    assert choice.options == ['"pass"', '"verify"', '"volunteer"'] and choice.branches is not None
    verify = choice.branches[1]
    assert (
        verify[0] == ', "target": '
        and isinstance(verify[1], Choice)
        and verify[1].options == ["1", "2", "3", "4"]
    )
    strings = [s for s in verify if isinstance(s, FreeString)]
    assert strings == [FreeString(80)] and verify[-1].endswith('"}')
    assert plan(SOLVE_SCHEMA) == ['{"answer": ', FreeNumber(integer=True), "}"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "integer"}},
        {"type": "string", "pattern": "^a+$"},
        {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}]},
        {"$ref": "#/defs/x"},
    ],
)
def test_schemas_outside_the_subset_are_unsupported(schema: dict) -> None:
    with pytest.raises(Unsupported):
        plan(schema)


def test_sampler_respects_the_allowed_set_temperature_and_seed() -> None:
    logits = np.array([5.0, 1.0, 4.0, 0.0, 3.0], dtype=np.float32)
    greedy = Sampler({"temperature": 0.0})
    assert greedy.sample(logits, None) == 0 and greedy.sample(logits, np.array([1, 4], dtype=np.intc)) == 4
    draws = [
        Sampler({"temperature": 1.0, "top_p": 1.0, "min_p": 0.0, "seed": s}).sample(logits, None)
        for s in range(40)
    ]
    again = [
        Sampler({"temperature": 1.0, "top_p": 1.0, "min_p": 0.0, "seed": s}).sample(logits, None)
        for s in range(40)
    ]
    assert draws == again and len(set(draws)) > 1
    mask = np.array([False, True, False, True, False])
    assert {Sampler({"temperature": 1.0, "seed": s}).sample(logits, mask) for s in range(20)} <= {1, 3}
    top1 = [Sampler({"temperature": 1.0, "top_k": 1, "seed": s}).sample(logits, None) for s in range(10)]
    assert set(top1) == {0}


# -- the embedded model ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def engine():
    pytest.importorskip("llama_cpp")
    from trustsim.llm import local
    from trustsim.llm.config import parse_model_config

    cfg = parse_model_config(OmegaConf.load(REPO / "conf/model/smollm2.yaml")).local
    cfg.n_threads = 1  # llama.cpp threads spin at barriers on shared, busy cores
    cfg.n_ctx = 4096
    return local._engine(cfg, local.load_model(cfg))


@pytest.mark.local_model
def test_answers_are_valid_under_the_schema_and_deterministic(engine) -> None:
    o = obs(1)
    schema = decision_schema(o, 80)
    messages = decision_messages(rules_text(4, None, True), o, "", [], True)
    answers = []
    for seed in (1, 2, 3):
        text, finish, stats = engine.complete(messages, schema, {"temperature": 0.7, "seed": seed})
        jsonschema.validate(json.loads(text), schema)
        assert finish == "stop" and stats.sampled_tokens >= 3 and stats.forced_tokens > stats.sampled_tokens
        assert stats.completion_tokens == len(engine._tok(text))
        answers.append(text)
    again, _, _ = engine.complete(messages, schema, {"temperature": 0.7, "seed": 1})
    assert again == answers[0]
    text, _, _ = engine.complete([{"role": "user", "content": "What is 6 x 7?"}], SOLVE_SCHEMA, {"seed": 0})
    assert isinstance(json.loads(text)["answer"], int)


@pytest.mark.local_model
def test_prefix_reuse_follows_each_seat_across_interleaved_calls(engine) -> None:
    rules = rules_text(4, None, True)
    first = {
        s: [{"role": "system", "content": rules}, {"role": "user", "content": f"You are {s}. " * 30}]
        for s in "AB"
    }
    params = {"temperature": 0.0, "max_tokens": 4}
    for seat in "AB":
        engine.complete(first[seat], None, params)
    later = [
        {"role": "system", "content": rules},
        {"role": "user", "content": "You are A. " * 30 + "Round 2."},
    ]
    _, _, stats = engine.complete(
        later, None, params
    )  # the live context holds B's prompt: A's state is loaded
    assert stats.state_loads == 1 and stats.reused_tokens > len(engine.prompt_tokens(first["A"])) - 8
    assert stats.evaluated_tokens == stats.prompt_tokens - stats.reused_tokens < 12


@pytest.mark.local_model
def test_enum_options_that_prefix_others_can_be_chosen(engine) -> None:
    schema = {"type": "object", "properties": {"p": {"enum": [0.0, 0.05, 0.5]}}, "required": ["p"]}
    seen = set()
    for seed in range(12):
        text, _, _ = engine.complete(
            [{"role": "user", "content": "Pick a probability."}], schema, {"temperature": 1.5, "seed": seed}
        )
        seen.add(json.loads(text)["p"])
    assert seen <= {0.0, 0.05, 0.5} and len(seen) >= 2


def test_number_bounds_decide_which_prefixes_can_continue() -> None:
    p = FreeNumber(integer=False, minimum=0, maximum=1)
    assert all(p.viable(t) for t in ("", "0", "0.", "0.75", "1", "1.", "1.0"))
    assert not any(p.viable(t) for t in ("-", "2", "1.5", "10"))
    assert p.complete("0.75") and p.complete("1") and not p.complete("0.") and not p.complete("1.5")
    q = FreeNumber(integer=True, minimum=5, maximum=30)
    assert q.viable("1") and q.viable("3") and not q.viable("4") and not q.complete("3") and q.complete("30")


@pytest.mark.local_model
def test_bounded_numbers_and_other_games_schemas(engine) -> None:
    from agents.reliance.parse import answer_schema
    from agents.trust_game.parse import trustor_schema

    for schema in (answer_schema(["delegate_P", "backup"], 80), trustor_schema(10, 3, 80)):
        for seed in range(3):
            text, _, _ = engine.complete(
                [{"role": "user", "content": "Answer in JSON."}], schema, {"temperature": 1.0, "seed": seed}
            )
            jsonschema.validate(json.loads(text), schema)
