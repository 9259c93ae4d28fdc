"""The litellm transport: one call, its result and a classification of its failures."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from trustsim.secrets import install_log_redaction

_litellm: Any = None

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def get_litellm() -> Any:
    """Import litellm once, lazily (it takes seconds), with the offline cost map and quiet loggers.

    The process's garbage collector is left as it is (no freeze, no changed thresholds): a library call does
    not change the memory behaviour of the user's process.
    """
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.WARNING)
        install_log_redaction()  # litellm's own handlers too: a provider error may quote the key
        _litellm = litellm
    return _litellm


@dataclass(frozen=True, slots=True)
class CallResult:
    """One answered call. ``cached_tokens`` were read from the provider's prompt cache and
    ``cache_write_tokens`` written to it; both are part of ``prompt_tokens`` (litellm's usage)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failure: ``retryable`` for rate limits, 5xx, timeouts and connection errors."""

    retryable: bool
    cause: str
    retry_after: float | None = None
    status: int | None = None  # the HTTP status, when there is one
    timeout: bool = False  # the request timed out (an overload signal, like a 429)


class EmptyResponseError(Exception):
    """A 200 answer without an answer: no choices, or a null message without a budget/filter stop.

    A provider fault (retried, never recorded as a move or stored), not the model's behaviour.
    """


# A null content with one of these finish reasons is the model's behaviour (it spent its budget thinking, or
# was filtered): recorded as an empty answer. Any other null content is a broken provider answer.
BEHAVIOURAL_FINISH = frozenset({"length", "content_filter"})


def answer_text(response: Any) -> str:
    """The text of the first choice; raises :class:`EmptyResponseError` when the answer is missing."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise EmptyResponseError("HTTP 200 with no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if content is None:
        refusal = getattr(message, "refusal", None)
        if isinstance(refusal, str) and refusal:
            return sanitize_text(refusal)  # a refusal is behaviour: recorded as the answer
        if getattr(choice, "finish_reason", None) in BEHAVIOURAL_FINISH:
            return ""
        raise EmptyResponseError("HTTP 200 with null message content")
    return sanitize_text(content)


def sanitize_text(text: Any) -> str:
    """Model text as valid UTF-8 (lone surrogates and undecodable bytes become replacement characters)."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    if not isinstance(text, str):
        text = str(text)
    return text.encode("utf-8", "replace").decode("utf-8", "replace")


def _retry_after(exc: BaseException) -> float | None:
    """Seconds a provider asked to wait: ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return float(millis) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, (when - datetime.datetime.now(when.tzinfo)).total_seconds())
    except (TypeError, ValueError, AttributeError, IndexError):
        return None


def classify(exc: BaseException) -> Failure | None:
    """Classify a transport exception; None means it is not a provider error (a bug: re-raise it)."""
    import httpx
    import openai

    cause = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
    if isinstance(exc, EmptyResponseError):
        return Failure(True, f"empty provider response ({exc})")
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, httpx.TimeoutException, openai.APITimeoutError)):
        return Failure(True, f"timeout ({cause})", timeout=True)
    if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):  # includes openai timeouts
        return Failure(True, cause)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        retryable = status in RETRYABLE_STATUS or status >= 500
        return Failure(retryable, f"HTTP {status} {cause}", _retry_after(exc) if retryable else None, status)
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)) and "json" in str(exc).lower():
        return Failure(True, f"malformed provider response ({cause})")
    if isinstance(exc, openai.OpenAIError):
        return Failure(True, cause)
    return None


# (litellm model id, api base) of models litellm could not price: its answer to a call that used tokens
# carried no cost. Later calls give litellm their price, zero (its documented per-call custom pricing,
# ``input_cost_per_token``/``output_cost_per_token``, never sent to the provider), so it does not search
# its price map and name variants for the model again on every call (~10 % of its CPU per call). The
# recorded cost is unchanged: trustsim counts a call litellm cannot price as 0 (budget.call_cost) and
# prices it from ``model.price`` when the config gives one. Models litellm prices are left to it.
_UNPRICED: set[tuple[str, str | None]] = set()
UNPRICED_PRICING = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0}


def _note_pricing(model: str, api_base: str | None, cost: Any, prompt_tokens: int) -> None:
    if cost is None and prompt_tokens > 0:
        _UNPRICED.add((model, api_base))


async def call_litellm(
    model: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    *,
    api_base: str | None,
    api_key: str | None,
    timeout_s: float | None,
    drop_params: bool,
    price: tuple[float, float] | None = None,
    sample: int = 0,
) -> CallResult:
    """One ``litellm.acompletion`` call (no retries inside litellm or the OpenAI SDK).

    ``timeout_s``: seconds before the call is abandoned (a retryable failure); None: no timeout (the embedded
    model, which runs in this process).

    ``sample``: the request's replicate/sample index (part of its request-store key); a provider request has
    no such field, so litellm is not told it (a transport with a cache of its own keys on it).

    ``price``: USD per (input, output) token the caller prices the call with (the model config's ``price``),
    given to litellm as its per-call prices: litellm then computes that cost without searching its price
    map (and the caller's cost is the same number).
    """
    litellm = get_litellm()
    kwargs: dict[str, Any] = dict(params)
    kwargs.update(
        model=model,
        messages=messages,
        timeout=timeout_s,
        max_retries=0,
        num_retries=0,
        drop_params=drop_params,
    )
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    if not UNPRICED_PRICING.keys() & kwargs.keys():  # prices in the model's params are its own
        if price is not None:
            kwargs["input_cost_per_token"], kwargs["output_cost_per_token"] = price
        elif (model, api_base) in _UNPRICED:
            kwargs.update(UNPRICED_PRICING)
    start = time.perf_counter()
    backstop = None if timeout_s is None else timeout_s + 1.0
    async with asyncio.timeout(backstop):  # a backstop to litellm's own timeout; no extra task
        response = await litellm.acompletion(**kwargs)
    latency = time.perf_counter() - start
    text = answer_text(response)
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    cached_tokens, cache_write_tokens = cache_tokens(usage)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    _note_pricing(model, api_base, cost, prompt_tokens)
    try:
        cost_usd = float(cost) if cost is not None else 0.0
    except (TypeError, ValueError):
        cost_usd = 0.0
    return CallResult(
        text, prompt_tokens, completion_tokens, cost_usd, latency, cached_tokens, cache_write_tokens
    )


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(read, written) prompt-cache tokens of litellm's ``Usage``, which maps every provider's counts to
    ``prompt_tokens_details``: ``cached_tokens`` (OpenAI's; Anthropic's ``cache_read_input_tokens``; Gemini's
    ``cachedContentTokenCount``; DeepSeek's ``prompt_cache_hit_tokens``) and ``cache_creation_tokens`` /
    ``cache_write_tokens`` (Anthropic's ``cache_creation_input_tokens``, also kept on the usage itself)."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = _count(getattr(details, "cached_tokens", None)) or _count(
        getattr(usage, "cache_read_input_tokens", None)
    )
    written = (
        _count(getattr(details, "cache_creation_tokens", None))
        or _count(getattr(details, "cache_write_tokens", None))
        or _count(getattr(usage, "cache_creation_input_tokens", None))
    )
    return read, written


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0
