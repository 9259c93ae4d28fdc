"""The LLM client: request store, in-flight de-duplication, the endpoint's shared limits, retries."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from trustsim.errors import RESUME_HINT, TrustsimError
from trustsim.host import current_host
from trustsim.llm import local
from trustsim.llm.budget import Budget
from trustsim.llm.caching import mark_stable_prefix
from trustsim.llm.config import LLMConfig, ModelConfig
from trustsim.llm.endpoint import Endpoint, EndpointKey, endpoint_for, estimate_tokens, limits_of
from trustsim.llm.errors import DamagedStoreError, MissingKeyError, ProviderError, ReplayMissError, StoreError
from trustsim.llm.keying import local_block
from trustsim.llm.pacing import Backoff
from trustsim.llm.store import Store, StoreDamaged, StoredResponse, canonical_request, request_key
from trustsim.llm.transport import CallResult, call_litellm, classify
from trustsim.llm.types import ChatRequest, ChatResponse
from trustsim.secrets import describe_env_name, redact_text, secret_values
from trustsim.write_failure import write_failure

log = logging.getLogger(__name__)

Transport = Callable[..., Awaitable[CallResult]]
# Sent as the key to a server that needs none (model.api_base set, model.api_key_env null): the OpenAI SDK
# refuses to send a request without one.
PLACEHOLDER_KEY = "no-key-configured"
BUSY_RETRIES_PER_RETRY = 20
"""429s of a busy endpoint (it answers other requests meanwhile) a request waits out per ``llm.max_retries``."""


class LLMClient:
    """Sends chat requests through litellm, serving repeats from the request store.

    One client per job. ``complete`` is safe to call concurrently from many coroutines of one event loop.
    ``transport`` (default: the job's host's, :mod:`trustsim.host`, else :func:`call_litellm`) sends one call.
    """

    def __init__(
        self,
        model: ModelConfig,
        llm: LLMConfig,
        store: Store | None,
        transport: Transport | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.model = model
        self.llm = llm
        self.store = store
        self.budget = budget or Budget(model, llm, store)  # prices calls; llm.budget_usd stops sending
        host = current_host()  # a harness running this job (trustsim.host) may bring its own transport
        self._transport = transport or (host.transport if host is not None else None) or call_litellm
        self._backoff = Backoff(llm.backoff_base_s, llm.backoff_max_s, llm.backoff_seed)
        self._inflight: dict[str, asyncio.Future[ChatResponse]] = {}
        self._secrets = secret_values()  # never stored or returned, even when a provider echoes one
        self._local_start = _local_totals(model)  # embedded model: token accounting at job start
        self._local: dict[str, Any] | None = None  # embedded model: its part of every request key
        self._stats: dict[str, float] = {
            "calls_sent": 0,
            "cache_hits": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cached_tokens": 0,
            "cache_write_tokens": 0,
            "cost_usd": 0.0,
            "retries": 0,
            "failed_attempts": 0,
            "rate_limited": 0,
            "latency_s": 0.0,
        }

    # -- routing ---------------------------------------------------------------------------------
    def route(self, req: ChatRequest) -> tuple[str, str | None, dict[str, Any]]:
        """The litellm model id, api base and merged generation params of a request."""
        if req.model in (self.model.name, self.model.litellm_model):
            model_id, api_base = self.model.litellm_model, self.model.api_base
        else:
            model_id, api_base = req.model, None
        # The purpose's own settings REPLACE the decision params (no merge): the reference study sent
        # sub-tasks their own settings (docs/prompts.md).
        base = dict(self.model.params_for(req.purpose))
        base.update(req.params)
        return model_id, api_base, base

    def messages(self, req: ChatRequest) -> list[dict[str, Any]]:
        """The messages sent for a request: with ``model.prompt_cache``, its stable prefix marked for the
        provider's prompt cache (trustsim.llm.caching). The marks change what is billed, not the answer: the
        request key covers the unmarked messages, so turning caching on or off replays the store."""
        if self.model.prompt_cache and req.model in (self.model.name, self.model.litellm_model):
            return mark_stable_prefix(req.messages, req.stable_chars)
        return req.messages

    def canonical(self, req: ChatRequest) -> str:
        """The canonical request: what is asked and, for the embedded model, how it computes the answer
        (the rule: :mod:`trustsim.llm.keying`)."""
        return self._canonical(req, *self.route(req))

    def _canonical(
        self, req: ChatRequest, model_id: str, api_base: str | None, params: dict[str, Any]
    ) -> str:
        block = self._local_block() if model_id == self.model.litellm_model else None
        return canonical_request(model_id, api_base, req.messages, params, req.sample, block)

    def key(self, req: ChatRequest) -> str:
        """The store key of a request (hash of the canonical request)."""
        return request_key(self.canonical(req))

    def _local_block(self) -> dict[str, Any] | None:
        """The embedded model's keyed settings and weights digest (computed once per client)."""
        if self.model.provider != "local":
            return None
        if self._local is None:
            self._local = local_block(self.model.local, local.find_gguf(self.model.local), self.store)
        return self._local

    # -- public API ------------------------------------------------------------------------------
    async def complete(self, req: ChatRequest) -> ChatResponse:
        """Complete a request: from the store when present, else sent (and stored)."""
        model_id, api_base, params = self.route(req)
        canonical = self._canonical(req, model_id, api_base, params)
        key = request_key(canonical)
        if self.store is not None and self.llm.cache:
            stored = self._get(key, canonical)
            if stored is not None:
                self._stats["cache_hits"] += 1
                return _response(stored, key)
        pending = self._inflight.get(key)
        if pending is not None:
            result = await asyncio.shield(pending)
            self._stats["cache_hits"] += 1
            return dataclasses.replace(result, cached=True, cost_usd=0.0, key=key)
        if self.llm.replay_only:
            where = str(self.store.path) if self.store is not None else ""
            raise ReplayMissError(
                f"llm.replay_only is set and this {req.purpose} request is not in the store (key {key[:12]})",
                model=model_id,
                store_path=where,
            )
        future: asyncio.Future[ChatResponse] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            sent = self._send_params(model_id, api_base, req, params)
            answer = await self._send(model_id, api_base, self.messages(req), sent, req.sample)
            if self._secrets and any(v in answer.text for v in self._secrets):  # an answer echoing a key
                answer = dataclasses.replace(answer, text=redact_text(answer.text, self._secrets))
            if self.store is not None:
                self._put(
                    key,
                    model=model_id,
                    api_base=api_base,
                    sample=req.sample,
                    purpose=req.purpose,
                    canonical=canonical,
                    response=StoredResponse(
                        answer.text,
                        answer.prompt_tokens,
                        answer.completion_tokens,
                        answer.cost_usd,
                        answer.latency_s,
                        answer.cached_tokens,
                        answer.cache_write_tokens,
                    ),
                )
            response = ChatResponse(
                answer.text,
                answer.prompt_tokens,
                answer.completion_tokens,
                answer.latency_s,
                False,
                answer.cost_usd,
                key,
                answer.cached_tokens,
                answer.cache_write_tokens,
            )
            future.set_result(response)
            return response
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
            self.budget.finished()

    def _store_key(self) -> str:
        return "llm.store_dir" if self.llm.store_dir else "llm.store_path"

    def _get(self, key: str, canonical: str) -> StoredResponse | None:
        assert self.store is not None
        try:
            return self.store.get(key, canonical)
        except StoreDamaged as exc:  # a damaged page met mid-run: stop, never buy its answer again
            raise DamagedStoreError(exc.path, exc.problem, self._store_key()) from None

    def _put(self, key: str, **row: Any) -> None:
        assert self.store is not None
        try:
            self.store.put(key, **row)
        except Exception as exc:  # sqlite3.Error, OSError: disk full, permissions changed mid-run
            failed = write_failure(exc, self.store.path, self._store_key())
            if failed is not None:  # exit 3: every answer stored before this one is kept
                raise failed from None
            raise StoreError(
                f"cannot write the request store at {self.store.path}: {exc}",
                resume=f"fix the request store (or choose another {self._store_key()}), then " + RESUME_HINT,
                key=self._store_key(),
            ) from None

    def stats(self) -> dict[str, Any]:
        """Counts for the manifest: calls sent, cache hits, tokens and cost of sent calls, retries (re-sends
        actually made), failed attempts."""
        out: dict[str, Any] = {
            k: int(v) for k, v in self._stats.items() if k not in ("cost_usd", "latency_s")
        }
        out["cost_usd"] = round(float(self._stats["cost_usd"]), 8)
        out["latency_s"] = round(float(self._stats["latency_s"]), 4)
        local = _local_delta(self.model, self._local_start)
        if local is not None:
            out["local"] = local
        return out

    async def aclose(self) -> None:
        """Close the store (pending calls should have finished)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    # -- sending ---------------------------------------------------------------------------------
    def _send_params(
        self, model_id: str, api_base: str | None, req: ChatRequest, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Local models sample with a seed derived from what is asked (the request without the
        ``model.local`` settings): distinct per request, reproducible, the same under every decoder."""
        if self.model.provider != "local":
            return params
        asked = request_key(canonical_request(model_id, api_base, req.messages, params, req.sample))
        base = int(params.get("seed") or 0)
        return {**params, "seed": (base + int(asked[:8], 16)) % (2**31)}

    def _timeout_s(self) -> float | None:
        """``llm.timeout_s``; none for the embedded model: its call runs in this process and cannot be
        stopped, and on a busy machine it is slow, not lost (a retry would redo the whole computation)."""
        return None if self.model.provider == "local" else self.llm.timeout_s

    def _endpoint(self, model_id: str, api_base: str | None) -> Endpoint:
        """The running loop's shared endpoint of a call (its model id, api base and key variable), with this
        client's limits for it (``model.limits`` over the ``llm`` group's; the embedded model: one at a time)."""
        key_env = self.model.api_key_env if model_id == self.model.litellm_model else None
        return endpoint_for(EndpointKey(model_id, api_base, key_env), limits_of(self.model, self.llm))

    def _api_key(self) -> str | None:
        """The key from ``model.api_key_env``; a placeholder for a keyless server; None: litellm's default."""
        check_key_env(self.model)
        env = self.model.api_key_env
        if env:
            return os.environ[env]
        if self.model.api_base and self.model.provider == "litellm":
            return PLACEHOLDER_KEY
        return None

    def _headers(self) -> dict[str, str]:
        """Headers whose values come from environment variables (``model.headers_env``)."""
        out = {}
        for header, var in self.model.headers_env.items():
            value = os.environ.get(var)
            if not value:
                raise MissingKeyError(
                    f"model.headers_env.{header}",
                    f"environment variable {describe_env_name(var)} is not set",
                    resume=f"export {describe_env_name(var)}=<value>, then re-run the same command",
                )
            out[header] = value
        return out

    def _pricing(self, model_id: str) -> dict[str, Any]:
        """The transport's ``price`` (USD per input and output token) for a call of the model itself when its
        config declares ``price``: the budget prices such calls from it (budget.call_cost), and litellm, told
        the same figures, skips its price-map search. Nothing otherwise (litellm prices the call)."""
        price = self.model.price
        if price is None or self.model.provider != "litellm" or model_id != self.model.litellm_model:
            return {}
        return {"price": (price.input_per_mtok / 1e6, price.output_per_mtok / 1e6)}

    def _advice(self, status: int | None) -> str:
        if status in (401, 403):
            env = self.model.api_key_env
            where = f"the key in {describe_env_name(env)}" if env else "the key (set model.api_key_env)"
            return f"check {where} and the model's access, then {RESUME_HINT}"
        if status in (400, 404, 422):
            return (
                "check model.litellm_model, model.api_base and model.params for this provider, then "
                + RESUME_HINT
            )
        return RESUME_HINT

    async def _send(
        self,
        model_id: str,
        api_base: str | None,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        sample: int,
    ) -> CallResult:
        """Send one request through its endpoint's limits, retrying provider faults. A 429 pauses the endpoint
        for its ``Retry-After`` and halves its window. It counts against ``llm.max_retries`` only when the
        endpoint answered nothing since this request's previous attempt: a busy endpoint is waited for (up to
        :data:`BUSY_RETRIES_PER_RETRY` times as many 429s), a failing one is not."""
        endpoint = self._endpoint(model_id, api_base)
        api_key = self._api_key()
        headers = self._headers()
        if headers:
            params = {**params, "extra_headers": {**(params.get("extra_headers") or {}), **headers}}
        pricing = self._pricing(model_id)
        tokens = estimate_tokens(messages)
        failures = 0  # failed attempts that count against llm.max_retries
        busy = 0  # 429s while the endpoint answered other requests
        sends = 0
        progress = endpoint.counts.answered  # the endpoint's answers when this request was last refused
        while True:
            async with endpoint.call(tokens) as call:
                if sends == 0 and not self.budget.admit():  # llm.budget_usd reached: nothing is sent
                    break
                sends += 1
                if sends > 1:
                    self._stats["retries"] += 1  # counted when the re-send happens, not when it is planned
                try:
                    result = await self._transport(
                        model_id,
                        messages,
                        params,
                        api_base=api_base,
                        api_key=api_key,
                        timeout_s=self._timeout_s(),
                        drop_params=self.model.drop_params,
                        sample=sample,
                        **pricing,
                    )
                except TrustsimError:
                    raise
                except Exception as exc:
                    failure = classify(exc)
                    if failure is None:
                        raise
                    self._stats["failed_attempts"] += 1
                    self._stats["rate_limited"] += failure.status == 429
                    call.failed(
                        status=failure.status, timeout=failure.timeout, retry_after=failure.retry_after
                    )
                    if failure.status == 429 and endpoint.counts.answered > progress:
                        busy += 1
                    else:
                        failures += 1
                    progress = endpoint.counts.answered
                else:
                    call.answered(result.prompt_tokens + result.completion_tokens)
                    result = self.budget.price(result)  # model.price, else litellm's cost; local 0
                    self._stats["calls_sent"] += 1
                    self._stats["prompt_tokens"] += result.prompt_tokens
                    self._stats["completion_tokens"] += result.completion_tokens
                    self._stats["cached_tokens"] += result.cached_tokens
                    self._stats["cache_write_tokens"] += result.cache_write_tokens
                    self._stats["cost_usd"] += result.cost_usd
                    self._stats["latency_s"] += result.latency_s
                    return result
            cause = redact_text(failure.cause, secret_values())  # a provider may echo the key
            budget = self.llm.max_retries
            if not failure.retryable or failures > budget or busy > BUSY_RETRIES_PER_RETRY * (budget + 1):
                raise ProviderError(
                    cause,
                    model=model_id,
                    attempts=sends,
                    retryable=failure.retryable,
                    resume=self._advice(failure.status),
                ) from None
            delay = self._backoff.delay(sends - 1, failure.retry_after)
            log.warning("LLM call failed (%s); retry %d in %.2fs", cause, sends, delay)
            await asyncio.sleep(delay)
        await self.budget.refuse()  # waits for the calls in flight, then raises BudgetReached


def check_key_env(model: ModelConfig) -> None:
    """Fail at start, naming the variable, when the model names a key variable that is not set."""
    for header, var in model.headers_env.items():
        if not os.environ.get(var):
            raise MissingKeyError(
                f"model.headers_env.{header}",
                f"environment variable {describe_env_name(var)} is not set",
                resume=f"export {describe_env_name(var)}=<value>, then re-run",
            )
    env = model.api_key_env
    if not env or os.environ.get(env):
        return
    keyless = " (for a server that needs no key: model.api_key_env=null)"
    if describe_env_name(env) == env:
        raise MissingKeyError(
            "model.api_key_env",
            f"environment variable {env} is not set (the model's API key is read from it)",
            resume=f"export {env}=<your key> and re-run{keyless}",
        )
    raise MissingKeyError(
        "model.api_key_env",
        "the variable it names is not set (its name is not shown: it does not look like a variable name; "
        "is it the key itself?)",
        resume=f"put the key in an environment variable and name it: model.api_key_env=MY_KEY{keyless}",
    )


def _response(stored: StoredResponse, key: str) -> ChatResponse:
    """A stored answer (served from the store: ``cached``)."""
    return ChatResponse(
        stored.text,
        stored.prompt_tokens,
        stored.completion_tokens,
        stored.latency_s,
        True,
        stored.cost_usd,
        key,
        stored.cached_tokens,
        stored.cache_write_tokens,
    )


def _local_totals(model: ModelConfig) -> dict[str, float] | None:
    if model.provider != "local":
        return None
    return local.totals()


def _local_delta(model: ModelConfig, start: dict[str, float] | None) -> dict[str, Any] | None:
    """The embedded model's token accounting since ``start`` (trustsim.llm.local.totals): prompt tokens,
    tokens reused from the KV cache and their share, tokens evaluated, sampled and forced, seconds."""
    if start is None:
        return None
    now = _local_totals(model) or {}
    out: dict[str, Any] = {k: now[k] - start.get(k, 0) for k in now}
    for k, v in out.items():
        out[k] = round(v, 3) if k.endswith("_s") else int(v)
    out["reuse_rate"] = (
        round(out["reused_tokens"] / out["prompt_tokens"], 4) if out.get("prompt_tokens") else 0.0
    )
    return out
