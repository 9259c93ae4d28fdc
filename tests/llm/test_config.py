"""The model and llm config groups: every shipped file validates; bad values name the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from trustsim.errors import ConfigError
from trustsim.llm import parse_llm_config, parse_model_config

CONF = Path(__file__).resolve().parents[2] / "conf"
LLM_MODELS = sorted(p for p in (CONF / "model").glob("*.yaml") if p.stem != "scripted")


@pytest.mark.parametrize("path", LLM_MODELS, ids=lambda p: p.stem)
def test_shipped_model_configs_validate(path: Path) -> None:
    model = parse_model_config(OmegaConf.load(path))
    assert model.name == path.stem
    assert model.provider == ("local" if path.stem == "smollm2" else "litellm")


def test_reference_snapshots_and_generic_servers_are_shipped() -> None:
    names = {p.stem for p in LLM_MODELS}
    assert {"smollm2", "gpt-5.1", "gpt-5.4-mini", "claude-opus-4-6", "claude-sonnet-4-6"} <= names
    assert {"gemini-3.1-pro", "gemini-2.5-flash", "openai_compatible", "ollama", "vllm"} <= names
    gpt = parse_model_config(OmegaConf.load(CONF / "model/gpt-5.1.yaml"))
    assert (
        gpt.params["reasoning_effort"] == "high"
        and gpt.purpose_params["solve"]["max_completion_tokens"] == 50
    )


def test_llm_defaults_validate() -> None:
    llm = parse_llm_config(OmegaConf.load(CONF / "llm/default.yaml"))
    assert llm.store_path == "outputs/request_store.sqlite" and llm.max_retries >= 1


BASE = {"name": "m", "litellm_model": "openai/m"}


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"provider": "magic"}, "model.provider"),
        ({"litellm_model": "nomodel"}, "model.litellm_model"),
        ({"params": {"api_key": "sk-123"}}, "model.params.api_key"),
        ({"api_key_env": "sk-live abc"}, "model.api_key_env"),
        ({"temperature": 0.5}, "model.temperature"),
        ({"drop_params": "yes"}, "model.drop_params"),
        ({"local": {"n_ctx": 100}}, "model.local.n_ctx"),
        ({"local": {"gpu": True}}, "model.local.gpu"),
        ({"structured_output": "xml"}, "model.structured_output"),
    ],
)
def test_bad_model_values_name_the_key(override: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_config({**BASE, **override})
    assert info.value.key == key


def test_missing_required_model_key() -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_config({"name": "x"})
    assert info.value.key == "model.litellm_model"


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"max_concurrency": 0}, "llm.max_concurrency"),
        ({"timeout_s": -1}, "llm.timeout_s"),
        ({"requests_per_minute": -5}, "llm.requests_per_minute"),
        ({"max_retries": "many"}, "llm.max_retries"),
        ({"bogus": 1}, "llm.bogus"),
    ],
)
def test_bad_llm_values_name_the_key(override: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_llm_config(override)
    assert info.value.key == key


def test_local_reasoning_cap_is_bounded() -> None:
    local = {**BASE, "provider": "local", "litellm_model": "trustsim/x", "reasoning_max_chars": 5000}
    with pytest.raises(ConfigError) as info:
        parse_model_config(local)
    assert info.value.key == "model.reasoning_max_chars"


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"api_base": "notaurl"}, "model.api_base"),
        ({"api_base": "ftp://host/v1"}, "model.api_base"),
        ({"api_base": "http://u:p@host/v1"}, "model.api_base"),
        ({"api_base": "http://host:99999/v1"}, "model.api_base"),
        ({"api_key_env": "CANARY-cli-333"}, "model.api_key_env"),
        ({"api_key_env": "sk_live_abcdefghijklmnop"}, "model.api_key_env"),
        ({"params": {"api_token": "x"}}, "model.params.api_token"),
        (
            {"params": {"extra_headers": {"Authorization": "Bearer x"}}},
            "model.params.extra_headers.Authorization",
        ),
        ({"params": {"extra_headers": {"X-Api-Key": "x"}}}, "model.params.extra_headers.X-Api-Key"),
        (
            {"purpose_params": {"solve": {"aws_secret_access_key": "x"}}},
            "model.purpose_params.solve.aws_secret_access_key",
        ),
        ({"params": {"user": "sk-proj-abcdefghijklmnopqrst"}}, "model.params.user"),
        ({"headers_env": {"X-Key": "not a name"}}, "model.headers_env.X-Key"),
    ],
)
def test_secrets_and_bad_urls_in_model_config_are_refused(override: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_config({**BASE, **override})
    assert info.value.key == key
    assert "x" not in info.value.message.split("'")  # the value is never echoed


def test_ordinary_params_are_not_mistaken_for_secrets() -> None:
    schema = {"type": "json_schema", "json_schema": {"schema": {"properties": {"password": {}, "token": {}}}}}
    model = parse_model_config(
        {
            **BASE,
            "api_base": "https://example.org:8443/v1",
            "params": {"max_tokens": 5, "max_completion_tokens": 5, "response_format": schema},
            "purpose_params": {"solve": {"thinking": {"type": "enabled", "budget_tokens": 10}}},
            "headers_env": {"X-Api-Key": "MY_HEADER_KEY"},
        }
    )
    assert model.params["max_tokens"] == 5 and model.headers_env == {"X-Api-Key": "MY_HEADER_KEY"}


def test_backoff_errors_blame_the_right_key() -> None:
    with pytest.raises(ConfigError) as info:
        parse_llm_config({"backoff_base_s": -1})
    assert info.value.key == "llm.backoff_base_s"
    with pytest.raises(ConfigError) as info:
        parse_llm_config({"backoff_base_s": 5, "backoff_max_s": 1})
    assert info.value.key == "llm.backoff_max_s"


def test_build_client_takes_validated_configs_only(tmp_path: Path) -> None:
    """``build_client`` receives the typed groups the job validated; a plain mapping is a TypeError naming the
    type it needs and the parser that makes it (nothing is opened or created)."""
    from trustsim.llm import build_client

    from .helpers import llm_dict, model_dict

    model, llm = model_dict(api_key_env=None), llm_dict(tmp_path / "s.sqlite")
    with pytest.raises(TypeError, match=r"model must be a ModelConfig .*parse_model_config.*got dict"):
        build_client(model, parse_llm_config(llm))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"llm must be a LLMConfig .*parse_llm_config.*got DictConfig"):
        build_client(parse_model_config(model), OmegaConf.create(llm))  # type: ignore[arg-type]
    assert not (tmp_path / "s.sqlite").exists()
    client = build_client(parse_model_config(model), parse_llm_config(llm))
    assert client.model.name == "fake" and (tmp_path / "s.sqlite").exists()
    client.store.close()
