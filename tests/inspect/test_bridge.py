"""The Inspect transport's translations: trustsim's params, messages and model ids to Inspect's, and back."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput

from trustsim.errors import ConfigError
from trustsim.llm.transport import EmptyResponseError
from trustsim_inspect.bridge import (
    MAIN,
    SAMPLE_KEY,
    answer,
    chat_messages,
    generate_config,
    model_id,
    role_of,
)


def test_model_ids_name_the_eval_model_or_a_role():
    assert model_id(None) == MAIN and role_of(MAIN) is None
    assert role_of(model_id("seat_c")) == "seat_c"
    with pytest.raises(ConfigError, match=r"model\.litellm_model"):
        role_of("openai/gpt-5.1")


def test_generation_params_become_a_generate_config():
    schema = {"type": "object", "properties": {"action": {"type": "string", "enum": ["pass"]}}}
    config = generate_config(
        {
            "temperature": 0.7,
            "top_p": 0.9,
            "max_tokens": 200,
            "seed": 3,
            "stop": "END",
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "move", "schema": schema, "strict": True},
            },
        }
    )
    assert (config.temperature, config.top_p, config.max_tokens, config.seed) == (0.7, 0.9, 200, 3)
    assert config.stop_seqs == ["END"]
    assert config.response_schema.name == "move" and config.response_schema.strict is True
    assert config.response_schema.json_schema.properties["action"].enum == ["pass"]


def test_json_mode_goes_in_the_request_body():
    config = generate_config({"response_format": {"type": "json_object"}, "extra_body": {"top_k": 5}})
    assert config.extra_body == {"top_k": 5, "response_format": {"type": "json_object"}}


def test_a_param_inspect_has_no_setting_for_fails_naming_it():
    with pytest.raises(ConfigError, match=r"model\.params\.mock_response"):
        generate_config({"mock_response": "hi"})


def test_messages_carry_the_sample_index_for_inspects_cache():
    """The sample index is in the last message's metadata (part of Inspect's cache key, not sent)."""
    chat = chat_messages(
        [{"role": "system", "content": "rules"}, {"role": "user", "content": "your move"}], 41
    )
    assert isinstance(chat[0], ChatMessageSystem) and isinstance(chat[1], ChatMessageUser)
    assert chat[0].metadata is None and chat[1].metadata == {SAMPLE_KEY: 41}
    with pytest.raises(ValueError, match="role 'tool'"):
        chat_messages([{"role": "tool", "content": "x"}], 0)


def test_an_answer_without_a_choice_is_a_provider_fault():
    assert answer(ModelOutput.from_content("m", "DECISION: Pass")) == "DECISION: Pass"
    with pytest.raises(EmptyResponseError):
        answer(ModelOutput(model="m", choices=[]))
