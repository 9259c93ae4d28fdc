"""The rules that keep secrets out of files: which names and values are secret, what is refused, what is
scrubbed from Hydra's files, and that log records are redacted."""

from __future__ import annotations

import logging

import pytest

from trustsim import secrets
from trustsim.secrets import (
    REDACTED,
    config_problem,
    is_secret_param,
    override_problem,
    redact,
    redact_argument,
    redact_assignments,
    register_secret_env,
    secret_values,
)

from .helpers import REPO


@pytest.fixture(autouse=True)
def _no_registered_names(monkeypatch) -> None:
    """Each test starts with no registered key sources (registration is process-wide)."""
    monkeypatch.setattr(secrets, "_registered", set())


def test_values_of_key_variables_and_registered_names_are_secret(monkeypatch) -> None:
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "value-of-provider-key-42")
    monkeypatch.setenv("PLAIN_NAME_DRILL", "value-of-plain-name-42")
    monkeypatch.setenv("CACHE_TOKEN_DIR", "/tmp/some/folder")
    monkeypatch.setenv("SHORT_TOKEN", "abc")
    assert "value-of-provider-key-42" in secret_values()
    assert "value-of-plain-name-42" not in secret_values()
    assert "/tmp/some/folder" not in secret_values() and "abc" not in secret_values()
    register_secret_env("PLAIN_NAME_DRILL")
    assert "value-of-plain-name-42" in secret_values()


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("api_token", True),
        ("Authorization", True),
        ("x-api-key", True),
        ("aws_secret_access_key", True),
        ("vertex_credentials", True),
        ("password", True),
        ("max_tokens", False),
        ("max_completion_tokens", False),
        ("budget_tokens", False),
        ("api_key_env", False),
        ("api_base", False),
        ("temperature", False),
    ],
)
def test_secret_param_names(name: str, secret: bool) -> None:
    assert is_secret_param(name) is secret


def test_hydra_files_keep_ordinary_keys_and_lose_secret_ones() -> None:
    text = "params:\n  max_tokens: 1024\n  api_token: abc123\napi_key_env: OPENAI_API_KEY\n"
    out = redact_assignments(text)
    assert "max_tokens: 1024" in out and "api_key_env: OPENAI_API_KEY" in out
    assert f"api_token: {REDACTED}" in out
    overrides = "- +model.params.extra_headers.Authorization=Bearer_X\n- game.games=2\n"
    assert (
        redact_assignments(overrides)
        == f"- +model.params.extra_headers.Authorization={REDACTED}\n- game.games=2\n"
    )


@pytest.mark.parametrize(
    ("arg", "refused"),
    [
        ("+model.params.api_token=X", True),
        ("+model.params.extra_headers.Authorization=Bearer_X", True),
        ("model.api_key_env=sk-proj-abcdefghijklmnopqrstu", True),
        ("model.api_key_env=CANARYcli_333", True),
        ("model.api_key_env=OPENAI_API_KEY", False),
        ("model.api_key_env=null", False),
        ("model.api_base=http://user:pw@host/v1", True),
        ("+model.params.user=sk-ant-api03-abcdefghijklmnopqr", True),
        ("game.coins=4", False),
        ("model.params.max_tokens=10", False),
        ("hydra.run.dir=/tmp/x", False),
        ("-m", False),
        ("+model.headers_env.X-Api-Key=MY_GATEWAY_KEY", False),  # docs/llm.md: a variable name
        ("+model.headers_env={X-Api-Key: MY_GATEWAY_KEY}", False),
        ("+model.headers_env.X-Api-Key=sk-proj-abcdefghijklmnopqrstu", True),
        ("model.api_base=https://gw.example/v1?key=abc123", True),
        ("model.api_base=https://gw.example/v1?api-version=2024-10-21", False),
        ("model.api_base=https://gw.example/v1?sig=abc123&sv=2024", True),
        ("model.api_base=https://gw.example/v1#access_token=abc123", True),
        ("model.api_base=https://token@gw.example/v1", True),
        ("+model.params.user=plain,sk-ant-api03-abcdefghijklmnopqr", True),  # one element of a sweep
        ("+model.params.extra_headers.X-Custom=Bearer sk-abcdefghijklmnopqr", True),
        ("+hydra.job.env_set.OPENAI_API_KEY=abc", True),
    ],
)
def test_overrides_refused_before_hydra(arg: str, refused: bool) -> None:
    assert (override_problem(arg) is not None) is refused


def test_an_override_holding_an_environment_secret_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("DRILL_API_KEY", "the-drill-secret-value-42")
    problem = override_problem("+model.params.user=the-drill-secret-value-42")
    assert problem is not None and "the-drill-secret-value-42" not in problem[1]


def test_log_records_are_redacted(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DRILL_LOG_TOKEN", "log-secret-value-123")
    handler = logging.FileHandler(tmp_path / "job.log")
    logger = logging.getLogger("drill.secrets")
    logger.addHandler(handler)
    try:
        secrets.install_log_redaction()
        logger.warning("provider said %s", "bad key log-secret-value-123")
        try:
            raise RuntimeError("echo log-secret-value-123")
        except RuntimeError:
            logger.exception("failed")
    finally:
        handler.close()
        logger.removeHandler(handler)
    text = (tmp_path / "job.log").read_text()
    assert "log-secret-value-123" not in text and text.count(REDACTED) >= 2  # message and traceback


@pytest.mark.parametrize(
    ("tree", "key"),
    [
        ({"model": {"params": {"extra_headers": {"Authorization": "Bearer sk-abcdefghijklmnop"}}}},
         "model.params.extra_headers.Authorization"),
        ({"model": {"params": {"extra_headers": {"X-Trace": "sk-abcdefghijklmnopqr"}}}},
         "model.params.extra_headers.X-Trace"),
        ({"model": {"api_base": "https://gw.example/v1?api_key=abc"}}, "model.api_base"),
        ({"model": {"headers_env": {"X-Api-Key": "sk-abcdefghijklmnopqr"}}}, "model.headers_env.X-Api-Key"),
        ({"game": {"seats": [{"model": {"params": {"api_key": "abc"}}}]}}, "game.seats[0].model.params.api_key"),
        ({"model": {"headers_env": {"X-Api-Key": "MY_GATEWAY_KEY"}, "api_key_env": "OPENAI_API_KEY"}}, None),
        ({"model": {"params": {"max_tokens": 5, "response_format": {"properties": {"password": {}}}}}}, None),
        ({"model": {"api_base": "http://127.0.0.1:8000/v1", "api_key": None}}, None),
    ],
)  # fmt: skip
def test_config_problem_names_the_key(tree, key) -> None:
    problem = config_problem(tree)
    assert (problem[0] if problem else None) == key


@pytest.mark.slow
def test_every_composed_preset_is_clean() -> None:
    """No shipped config file trips the rules (no false refusal of a preset)."""
    from trustsim.api import compose

    for preset in sorted(p.stem for p in (REPO / "conf/experiment").glob("*.yaml")):
        assert config_problem(compose(preset, ["agent=llm"])) is None, preset
    for model in sorted(p.stem for p in (REPO / "conf/model").glob("*.yaml")):
        assert config_problem(compose(None, [f"model={model}"])) is None, model


def test_redaction_replaces_whole_values() -> None:
    cfg = {
        "model": {
            "params": {
                "extra_headers": {
                    "Authorization": "Bearer sk-abcdefghijklmnop",
                    "X-Id": "sk-abcdefghijklmnopq",
                }
            },
            "api_base": "https://gw.example/v1?key=abc123",
            "headers_env": {"X-Api-Key": "MY_GATEWAY_KEY"},
        }
    }
    out = redact(cfg)["model"]
    assert out["params"]["extra_headers"] == {"Authorization": REDACTED, "X-Id": REDACTED}
    assert out["api_base"] == REDACTED and out["headers_env"] == {"X-Api-Key": "MY_GATEWAY_KEY"}
    text = 'Authorization: "Bearer sk-abcdefghijklmnop"\nX-Api-Key: Bearer abc def\n'
    assert redact_assignments(text) == f"Authorization: {REDACTED}\nX-Api-Key: {REDACTED}\n"
    assert redact_assignments("+model.headers_env.X-Api-Key=MY_GATEWAY_KEY").endswith("=MY_GATEWAY_KEY")
    assert redact_argument("model.api_base=https://gw.example/v1?key=abc123") == f"model.api_base={REDACTED}"
