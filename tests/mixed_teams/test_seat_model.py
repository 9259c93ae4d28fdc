"""The seat model forms and the merged LLM stats of a job with several clients."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from trustsim.errors import ConfigError
from trustsim.llm.seat_model import merge_stats, resolve_model


class _Client:
    def __init__(self, name: str, **stats: object) -> None:
        self.model = SimpleNamespace(name=name)
        self._stats = stats

    def stats(self) -> dict:
        return dict(self._stats)


def test_one_client_keeps_its_stats_unchanged() -> None:
    main = _Client("m1", calls_sent=3, cache_hits=1, cost_usd=0.5, local={"prompt_tokens": 7})
    assert merge_stats(main, []) == main.stats()
    assert merge_stats(None, []) is None


def test_seat_clients_are_summed_and_listed_by_model() -> None:
    main = _Client("m1", calls_sent=3, cache_hits=1, cost_usd=0.25, latency_s=1.0, local={"n": 1})
    seat = _Client("m2", calls_sent=2, cache_hits=0, cost_usd=0.5, latency_s=0.5, local={"n": 1})
    out = merge_stats(main, [seat])
    assert out["calls_sent"] == 5 and out["cache_hits"] == 1
    assert out["cost_usd"] == pytest.approx(0.75) and out["latency_s"] == pytest.approx(1.5)
    assert out["local"] == {"n": 1}  # process-wide: taken once, not summed
    assert out["by_model"]["m1"]["calls_sent"] == 3 and out["by_model"]["m2"]["calls_sent"] == 2


def test_model_forms() -> None:
    assert resolve_model(None, "k") is None
    preset = resolve_model("vllm", "k")
    assert preset is not None and preset.values["name"] == "vllm" and "litellm_model" in preset.values
    assert preset.config.name == "vllm"
    changed = resolve_model({"preset": "vllm", "api_base": "http://127.0.0.1:9/v1"}, "k")
    assert changed is not None and changed.values == {**preset.values, "api_base": "http://127.0.0.1:9/v1"}
    assert changed.config.api_base == "http://127.0.0.1:9/v1"
    full = {"name": "b", "litellm_model": "openai/b", "api_base": "http://127.0.0.1:8/v1"}
    assert resolve_model(full, "k").values == full
    gpt = resolve_model("gpt-5.1", "k")
    assert gpt is not None and resolve_model(gpt.values, "k") == gpt  # idempotent


@pytest.mark.parametrize(
    ("value", "key", "words"),
    [
        ("scripted", "k", "not a language model"),
        ("gpt5.1", "k", "did you mean 'gpt-5.1'"),
        ({"preset": 3}, "k.preset", "expected a model preset name"),
        ({"name": "b", "litellm_model": "b"}, "k.litellm_model", "provider"),
        ({"preset": "vllm", "api_key_env": "sk-0123456789abcdef0123456789"}, "k.api_key_env", "NAME"),
        (3, "k", "expected a model preset name or a model config mapping"),
    ],
)
def test_bad_model_values_name_the_key(value, key, words) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_model(value, "k")
    assert err.value.key == key and words in str(err.value)
