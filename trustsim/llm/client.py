"""The LLM client: request store, in-flight de-duplication, concurrency and rate limits, retries."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from trustsim.llm.config import LLMConfig, ModelConfig
from trustsim.llm.errors import ProviderError, ReplayMissError
from trustsim.llm.pacing import Backoff, RateLimiter
from trustsim.llm.store import RequestStore, StoredResponse, canonical_request, request_key
from trustsim.llm.transport import CallResult, call_litellm, classify
from trustsim.llm.types import ChatRequest, ChatResponse

log = logging.getLogger(__name__)

Transport = Callable[..., Awaitable[CallResult]]
PURPOSE_PARAMS = {"decision": "params", "solve": "subtask_params", "reflection": "reflection_params"}


class LLMClient:
    """Sends chat requests through litellm, serving repeats from the request store.

    One client per job. ``complete`` is safe to call concurrently from many coroutines of one event loop.
    """

    def __init__(
        self,
        model: ModelConfig,
        llm: LLMConfig,
        store: RequestStore | None,
        transport: Transport = call_litellm,
    ) -> None:
        self.model = model
        self.llm = llm
        self.store = store
        self._transport = transport
        self._backoff = Backoff(llm.backoff_base_s, llm.backoff_max_s, llm.backoff_seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None
        self._limiter: RateLimiter | None = None
        self._inflight: dict[str, asyncio.Future[ChatResponse]] = {}
        self._stats: dict[str, float] = {
            "calls_sent": 0,
            "cache_hits": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
            "retries": 0,
            "latency_s": 0.0,
        }

    # -- routing ---------------------------------------------------------------------------------
    def route(self, req: ChatRequest) -> tuple[str, str | None, dict[str, Any]]:
        """The litellm model id, api base and merged generation params of a request."""
        if req.model in (self.model.name, self.model.litellm_model):
            model_id, api_base = self.model.litellm_model, self.model.api_base
        else:
            model_id, api_base = req.model, None
        group = PURPOSE_PARAMS.get(req.purpose, "params")
        base = dict(self.model.params)
        if group != "params":
            base.update(getattr(self.model, group))
        base.update(req.params)
        return model_id, api_base, base

    def key(self, req: ChatRequest) -> str:
        """The store key of a request (hash of the canonical request)."""
        model_id, api_base, params = self.route(req)
        return request_key(canonical_request(model_id, api_base, req.messages, params, req.sample))

    # -- public API ------------------------------------------------------------------------------
    async def complete(self, req: ChatRequest) -> ChatResponse:
        """Complete a request: from the store when present, else sent (and stored)."""
        model_id, api_base, params = self.route(req)
        canonical = canonical_request(model_id, api_base, req.messages, params, req.sample)
        key = request_key(canonical)
        if self.store is not None and self.llm.cache:
            stored = self.store.get(key)
            if stored is not None:
                self._stats["cache_hits"] += 1
                return _response(stored, cached=True)
        pending = self._inflight.get(key)
        if pending is not None:
            result = await asyncio.shield(pending)
            self._stats["cache_hits"] += 1
            return ChatResponse(
                result.text, result.prompt_tokens, result.completion_tokens, result.latency_s, True, 0.0
            )
        if self.llm.replay_only:
            raise ReplayMissError(
                "llm.replay_only is set and this request is not in the store", model=model_id, attempts=0
            )
        future: asyncio.Future[ChatResponse] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._send(model_id, api_base, req.messages, self._send_params(params, key))
            if self.store is not None:
                self.store.put(
                    key,
                    model=model_id,
                    api_base=api_base,
                    sample=req.sample,
                    purpose=req.purpose,
                    canonical=canonical,
                    response=StoredResponse(
                        result.text,
                        result.prompt_tokens,
                        result.completion_tokens,
                        result.cost_usd,
                        result.latency_s,
                    ),
                )
            response = ChatResponse(
                result.text,
                result.prompt_tokens,
                result.completion_tokens,
                result.latency_s,
                False,
                result.cost_usd,
            )
            future.set_result(response)
            return response
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)

    def stats(self) -> dict[str, Any]:
        """Counts for the manifest: calls sent, cache hits, tokens and cost of sent calls, retries."""
        out: dict[str, Any] = {
            k: int(v) for k, v in self._stats.items() if k not in ("cost_usd", "latency_s")
        }
        out["cost_usd"] = round(float(self._stats["cost_usd"]), 8)
        out["latency_s"] = round(float(self._stats["latency_s"]), 4)
        return out

    async def aclose(self) -> None:
        """Close the store (pending calls should have finished)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    # -- sending ---------------------------------------------------------------------------------
    def _send_params(self, params: dict[str, Any], key: str) -> dict[str, Any]:
        """Local models sample with a seed derived from the request key: distinct per request, reproducible."""
        if self.model.provider != "local":
            return params
        base = int(params.get("seed") or 0)
        return {**params, "seed": (base + int(key[:8], 16)) % (2**31)}

    def _primitives(self) -> tuple[asyncio.Semaphore, RateLimiter]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._sem is None or self._limiter is None:
            self._loop = loop
            self._sem = asyncio.Semaphore(self.llm.max_concurrency)
            self._limiter = RateLimiter(self.llm.requests_per_minute)
        return self._sem, self._limiter

    def _api_key(self) -> str | None:
        env = self.model.api_key_env
        if not env:
            return None
        value = os.environ.get(env)
        if not value:
            # Name the variable only when it looks like one (never echo a key pasted in by mistake).
            shown = env if env.isupper() and len(env) <= 64 else "named in model.api_key_env"
            raise ProviderError(f"environment variable {shown} is not set", model=self.model.name)
        return value

    async def _send(
        self, model_id: str, api_base: str | None, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> CallResult:
        sem, limiter = self._primitives()
        attempts = 0
        async with sem:
            while True:
                attempts += 1
                await limiter.acquire()
                try:
                    result = await self._transport(
                        model_id,
                        messages,
                        params,
                        api_base=api_base,
                        api_key=self._api_key(),
                        timeout_s=self.llm.timeout_s,
                        drop_params=self.model.drop_params,
                    )
                except ProviderError:
                    raise
                except Exception as exc:
                    failure = classify(exc)
                    if failure is None:
                        raise
                    if not failure.retryable or attempts > self.llm.max_retries:
                        raise ProviderError(
                            failure.cause, model=model_id, attempts=attempts, retryable=failure.retryable
                        ) from exc
                    delay = self._backoff.delay(attempts - 1, failure.retry_after)
                    self._stats["retries"] += 1
                    log.warning("LLM call failed (%s); retry %d in %.2fs", failure.cause, attempts, delay)
                    await asyncio.sleep(delay)
                    continue
                self._stats["calls_sent"] += 1
                self._stats["prompt_tokens"] += result.prompt_tokens
                self._stats["completion_tokens"] += result.completion_tokens
                self._stats["cost_usd"] += result.cost_usd
                self._stats["latency_s"] += result.latency_s
                return result


def _response(stored: StoredResponse, *, cached: bool) -> ChatResponse:
    return ChatResponse(
        stored.text, stored.prompt_tokens, stored.completion_tokens, stored.latency_s, cached, stored.cost_usd
    )
