"""The preview's LLM client: the real :class:`~trustsim.llm.LLMClient` over a stand-in transport.

Requests are built, routed and keyed by the real client (the same messages, generation settings and
``response_format`` a run sends), looked up in the request store read-only (a stored answer is served, as in
a real run, and is free), and otherwise answered by the stand-in (:mod:`trustsim.preview.standin`), which
counts their tokens and never sends anything. No key is read, no store row is written.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import statistics
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustsim.llm.caching import PrefixCache, cacheable_tokens, marked_chars, marks_prompt_cache, prompt_text
from trustsim.llm.client import LLMClient
from trustsim.llm.config import EndpointLimits, LLMConfig, ModelConfig
from trustsim.llm.decision import CURRENT_ASK
from trustsim.llm.pricing import max_output_tokens, price_of
from trustsim.llm.store import RequestStore, ShardedStore, StoredResponse
from trustsim.llm.transport import CallResult
from trustsim.llm.types import ChatRequest, ChatResponse
from trustsim.preview import standin
from trustsim.preview.lengths import MIN_OBSERVED, AnswerLengths, Central

# The round being played in the current task (set by the preview's recorder from ``round_start`` events;
# None between games): which requests a shorter game would not make.
CURRENT_ROUND: ContextVar[int | None] = ContextVar("trustsim_preview_round", default=None)
_LAST_CALL: ContextVar[CallInfo | None] = ContextVar("trustsim_preview_call", default=None)

UNPACED = EndpointLimits(requests_per_minute=0, tokens_per_minute=0)
"""A preview's model limits: it sends nothing, so no rate applies."""


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What the stand-in counted for one request it answered."""

    prompt_tokens: int
    completion_min: int  # the stand-in answer's tokens
    completion_bound: int  # the longest answer the schema allows, else the token cap
    completion_cap: int  # the token cap, else the bound
    basis: str  # what bounds the answer: schema | max_tokens | stand-in
    valid: bool  # the kit's parser accepted the stand-in answer
    central: Central | None = None  # the expected tokens (trustsim.preview.lengths), set by the client
    cached_tokens: int = 0  # prompt tokens a provider's prompt cache would serve (trustsim.llm.caching)
    cache_write_tokens: int = 0  # prompt tokens it would write to its cache (Anthropic's marked prefix)


@dataclass(frozen=True, slots=True)
class Request:
    """One request of a previewed job."""

    purpose: str
    name: str
    round: int | None
    source: str  # store (already stored: free) | repeat (asked earlier in this preview: free) | send
    call: CallInfo | None  # counts, for requests to send


class LookupStore:
    """A read-only view of the request store: stored answers are found by the client's key; the stand-in's
    answers are kept in memory only (a repeated request is served as a real run's store would serve it)."""

    def __init__(self, path: Path, *, sharded: bool = False) -> None:
        self.path = path
        self._store: Any = None
        try:
            if sharded:  # llm.store_dir: every shard, read-only (no shard claimed, no lock)
                if path.is_dir():
                    self._store = ShardedStore(path, read_only=True)
            elif path.is_file():
                self._store = RequestStore(path, read_only=True)
        except (OSError, sqlite3.Error):
            self._store = None  # nothing readable there: every request counts as to send
        self._answered: dict[str, StoredResponse] = {}  # the stand-in's answers, this preview only
        self.stored_hits: set[str] = set()

    def get(self, key: str, canonical: str | None = None) -> StoredResponse | None:
        if key in self._answered:
            return self._answered[key]
        found = None
        if self._store is not None:
            found = self._store.get(key) if canonical is None else self._store.get(key, canonical)
        if found is not None:
            self.stored_hits.add(key)
        return found

    def spend(self, job: str | None = None) -> float:
        return 0.0  # a preview spends nothing (llm.budget_usd never stops it)

    def answer_lengths(self, model: str, purpose: str) -> list[int]:
        """Completion tokens of the stored answers of ``model`` for ``purpose`` (none without a store)."""
        if self._store is None:
            return []
        try:
            return self._store.answer_lengths(model, purpose)
        except sqlite3.Error:
            return []

    def answer_latencies(self, model: str) -> list[float]:
        """Seconds per stored answer of ``model`` (none without a store)."""
        if self._store is None:
            return []
        try:
            return self._store.answer_latencies(model)
        except sqlite3.Error:
            return []

    def meta(self, name: str) -> str | None:
        return self._store.meta(name) if self._store is not None else None

    def set_meta(self, name: str, value: str) -> None:
        pass  # a preview writes nothing

    def put(self, key: str, *, response: StoredResponse, **row: Any) -> None:
        self._answered[key] = response

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


class StandIn:
    """A transport that never sends: answers with a stand-in and counts tokens (litellm's counter)."""

    def __init__(self, model: ModelConfig, play: standin.Play | None = None) -> None:
        self.limit = max_output_tokens(model.litellm_model)
        self.play = play or standin.Play()
        self.caching = caching_of(model)
        self._cache = PrefixCache()

    async def __call__(
        self, model: str, messages: list[dict[str, Any]], params: dict[str, Any], **_: Any
    ) -> CallResult:
        ask = CURRENT_ASK.get()
        text, valid = standin.answer(ask, params, self.play)
        prompt = standin.count_messages(model, messages, params)
        low = standin.count_text(model, text)
        cap = standin.token_cap(params, self.limit)
        by_schema = standin.schema_tokens(model, ask)
        if by_schema is not None:
            bound, basis = (min(by_schema, cap) if cap else by_schema), "schema"
        elif cap is not None:
            bound, basis = cap, "max_tokens"
        else:
            bound, basis = low, "stand-in"
        cached, written = self._cached(messages, prompt)
        info = CallInfo(prompt, low, bound, max(cap or bound, low), basis, valid, None, cached, written)
        _LAST_CALL.set(info)
        return CallResult(text, prompt, low, 0.0, 0.0, cached, written)

    def _cached(self, messages: list[dict[str, Any]], prompt_tokens: int) -> tuple[int, int]:
        """Prompt tokens a provider's cache would serve and write for this request, from the prefix it shares
        with the job's earlier requests to the model (:func:`caching_of` says how the model caches)."""
        text = prompt_text(messages)
        shared = self._cache.shared(text)
        per_char = prompt_tokens / max(1, len(text))
        if self.caching == "implicit":
            return cacheable_tokens(shared * per_char), 0
        marked = marked_chars(messages)
        if self.caching != "marked" or cacheable_tokens(marked * per_char) == 0:
            return 0, 0
        cached = cacheable_tokens(min(shared, marked) * per_char)
        return cached, int(marked * per_char) - cached


def caching_of(model: ModelConfig) -> str:
    """How a model's provider caches prompts: ``marked`` (Anthropic with ``model.prompt_cache``: the marked
    prefix), ``implicit`` (a repeated prefix, for a model priced with a cache-read price: OpenAI, Gemini,
    DeepSeek, or ``model.price.cache_read_per_mtok``), else ``none``."""
    if marks_prompt_cache(model.litellm_model):
        return "marked" if model.prompt_cache else "none"
    price = price_of(model)
    return "implicit" if price is not None and price.cache_read_per_mtok is not None else "none"


class PreviewClient(LLMClient):
    """The job's client in a preview: records every request (purpose, round, stored or to send)."""

    def __init__(
        self, model: ModelConfig, llm: LLMConfig, store_path: Path, play: standin.Play | None = None
    ) -> None:
        # keys are not part of a request key; nothing is sent, so no rate applies
        keyless = dataclasses.replace(model, api_key_env=None, headers_env={}, limits=UNPACED)
        calm = dataclasses.replace(
            llm, replay_only=False, requests_per_minute=None, tokens_per_minute=None, max_retries=0
        )
        if hasattr(calm, "budget_usd"):
            calm = dataclasses.replace(calm, budget_usd=None)  # a preview sends nothing: no cap applies
        sharded = getattr(llm, "store_dir", None) is not None
        lookup = LookupStore(store_path, sharded=sharded)
        super().__init__(keyless, calm, lookup, transport=StandIn(model, play))
        self.lookup = lookup
        self.lengths = AnswerLengths(lookup, play.short if play is not None else frozenset())
        self.requests: list[Request] = []
        self.model_ids: set[str] = set()  # the litellm ids asked (the store's ``model`` column)

    async def complete(self, req: ChatRequest) -> ChatResponse:
        ask = CURRENT_ASK.get()
        token = _LAST_CALL.set(None)
        try:
            resp = await super().complete(req)
            call = _LAST_CALL.get()
        finally:
            _LAST_CALL.reset(token)
        if not resp.cached:
            source = "send"
            self.model_ids.add(self.route(req)[0])
            if call is not None:
                model_id = self.route(req)[0]
                expected = self.lengths.central(
                    model_id, req.purpose, call.completion_min, call.completion_bound
                )
                call = dataclasses.replace(call, central=expected)
        else:
            hits: set[str] = self.store.stored_hits if isinstance(self.store, LookupStore) else set()
            source = "store" if self.key(req) in hits else "repeat"
        self.requests.append(
            Request(
                req.purpose,
                ask.name if ask else "",
                CURRENT_ROUND.get(),
                source,
                call if not resp.cached else None,
            )
        )
        return resp

    def seconds_per_call(self) -> tuple[float, int] | None:
        """The median seconds per stored answer of the models this client asked, with how many answers;
        None below :data:`~trustsim.preview.lengths.MIN_OBSERVED` answers."""
        latencies = [s for m in sorted(self.model_ids) for s in self.lookup.answer_latencies(m)]
        return (statistics.median(latencies), len(latencies)) if len(latencies) >= MIN_OBSERVED else None


def preview_client(
    model: ModelConfig, llm: LLMConfig, base_dir: Path | None = None, play: standin.Play | None = None
) -> PreviewClient:
    """The preview client of one model, looking up ``llm.store_path`` (relative to ``base_dir`` or the
    working directory, as :func:`trustsim.llm.build_client` resolves it)."""
    path = Path(getattr(llm, "store_dir", None) or llm.store_path).expanduser()
    if not path.is_absolute():
        path = Path(base_dir or Path.cwd()) / path
    return PreviewClient(model, llm, path, play)
