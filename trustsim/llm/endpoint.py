"""Limits that belong to an endpoint, shared by every job of the process that sends to it.

An endpoint is a litellm model id with its api_base and the name of its key variable (:class:`EndpointKey`):
what a provider meters. Every client of one event loop that sends to the same endpoint (the jobs of a
``hydra/launcher=trustsim`` sweep, a mixed team's seats) gets the same :class:`Endpoint`, which admits one
request at a time, in arrival order, when all of these allow it:

- **requests in flight** below the endpoint's window: it starts at the ceiling ``max_concurrency``, grows by
  one per window of answers (additive increase) and halves on an overload signal, a 429, 503 or 529 or a
  timeout (multiplicative decrease; once per window: answers to requests sent before the last cut do not
  cut it again). So concurrency is limited by what the provider accepts, under a sane ceiling;
- **request starts per minute**: consecutive starts at least ``60 / requests_per_minute`` seconds apart, times
  ``1 + SAFETY`` (network jitter must not push a start into the provider's previous window). The first
  request of a rate-limited endpoint goes alone: the next one starts an interval after its outcome. A first
  call does one-time work between its start and the moment it leaves (importing litellm takes seconds,
  setting up its HTTP client a fraction of one), so spacing from its start would let the next requests
  catch up with it, and the provider would count one request too many in the first minute;
- **tokens per minute**: a bucket of ``tokens_per_minute`` tokens refilled continuously; a request takes its
  estimated prompt tokens when it starts and the rest of its prompt and completion tokens when answered;
- **a pause** until a 429's ``Retry-After`` has passed (no request of the endpoint starts before).

The endpoint also counts what it sent, answers, 429s and tokens (the sweep's progress line reads them).
When clients of one endpoint are configured with different limits, the strictest of each applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

SAFETY = 0.02
"""Fraction added to the interval between request starts (jitter between here and the provider's clock)."""
LOCAL_CONCURRENCY = 1
"""The embedded llama.cpp model answers one request at a time."""
OVERLOAD_STATUS = frozenset({429, 503, 529})
"""HTTP statuses that say the endpoint is overloaded (the window halves)."""
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class EndpointKey:
    """What a provider meters: the litellm model id, the API base and the name of the key variable."""

    model: str
    api_base: str | None = None
    key_env: str | None = None

    def __str__(self) -> str:
        where = f" at {self.api_base}" if self.api_base else ""
        key = f" ({self.key_env})" if self.key_env else ""
        return f"{self.model}{where}{key}"


@dataclass(frozen=True, slots=True)
class Limits:
    """An endpoint's limits: the ceiling of requests in flight; starts and tokens per minute (None: none)."""

    max_concurrency: int
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def strictest(self, other: Limits) -> Limits:
        """Each limit at the stricter of the two values (None is no limit)."""
        return Limits(
            min(self.max_concurrency, other.max_concurrency),
            _min_rate(self.requests_per_minute, other.requests_per_minute),
            _min_rate(self.tokens_per_minute, other.tokens_per_minute),
        )


def _min_rate(a: float | None, b: float | None) -> float | None:
    rates = [r for r in (a, b) if r]
    return min(rates) if rates else None


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A request's prompt tokens, estimated from its text (about four characters a token)."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return chars // CHARS_PER_TOKEN + 1


@dataclass(slots=True)
class Counts:
    """What an endpoint did: requests sent (attempts with an outcome), answers, 429s, overload signals (429,
    503, 529, timeouts), tokens answered."""

    sent: int = 0
    answered: int = 0
    rate_limited: int = 0
    overloaded: int = 0
    tokens: int = 0


@dataclass(slots=True)
class Call:
    """One admitted request. Report its outcome with :meth:`answered` or :meth:`failed`; a call whose block
    ends unreported (cancelled, or nothing was sent) frees its place and counts as nothing."""

    endpoint: Endpoint
    tokens: int
    epoch: int
    done: bool = field(default=False)

    def answered(self, tokens: int) -> None:
        """The call was answered, using ``tokens`` prompt and completion tokens."""
        self.endpoint._answered(self, tokens)

    def failed(
        self, *, status: int | None = None, timeout: bool = False, retry_after: float | None = None
    ) -> None:
        """The call failed. A 429/503/529 or a timeout halves the endpoint's window; a ``retry_after`` pauses
        it."""
        self.endpoint._failed(self, status=status, timeout=timeout, retry_after=retry_after)


class Endpoint:
    """The shared limits of one endpoint in one event loop (see the module docstring)."""

    def __init__(
        self,
        key: EndpointKey,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.limits = limits
        self.window = float(limits.max_concurrency)
        self.in_flight = 0
        self.counts = Counts()
        self._clock = clock
        self._epoch = 0
        self._last_start = -math.inf  # the latest request start (for the first request: its outcome)
        self._warm = False  # a request of this endpoint had an outcome (the transport is set up)
        self._paused_until = -math.inf
        self._bucket = float(limits.tokens_per_minute or 0.0)
        self._bucket_at = clock()
        self._turn = asyncio.Lock()  # FIFO: requests are admitted one at a time, in arrival order
        self._freed = asyncio.Event()

    def tighten(self, limits: Limits) -> None:
        """Apply the strictest of the current and ``limits`` (another client's settings)."""
        merged = self.limits.strictest(limits)
        if merged != self.limits:
            self.limits = merged
            self.window = min(self.window, float(merged.max_concurrency))

    @property
    def interval(self) -> float:
        """Seconds between two request starts (0: no rate limit)."""
        rpm = self.limits.requests_per_minute
        return 60.0 / rpm * (1.0 + SAFETY) if rpm else 0.0

    # -- admission ------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def call(self, tokens: int) -> AsyncIterator[Call]:
        """Wait for the endpoint to admit a request of ``tokens`` estimated prompt tokens; yields its
        :class:`Call`, released when the block ends."""
        admitted = await self._admit(tokens)
        try:
            yield admitted
        finally:
            if not admitted.done:
                self._release(admitted)

    async def _admit(self, tokens: int) -> Call:
        async with self._turn:
            while True:
                now = self._clock()
                next_start = self._last_start + self.interval
                wait = max(self._paused_until - now, next_start - now, self._token_wait(tokens, now))
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                alone = self.interval > 0 and not self._warm  # the first request goes alone
                if self.in_flight >= (1 if alone else max(1, int(self.window))):
                    self._freed.clear()
                    await self._freed.wait()
                    continue
                break
            self.in_flight += 1
            self._last_start = now
            if self.limits.tokens_per_minute:
                self._bucket -= tokens
            return Call(self, tokens, self._epoch)

    def _token_wait(self, tokens: int, now: float) -> float:
        """Seconds until the token bucket holds ``tokens`` (at most its size), refilling it to now."""
        tpm = self.limits.tokens_per_minute
        if not tpm:
            return 0.0
        per_s = tpm / 60.0
        self._bucket = min(float(tpm), self._bucket + (now - self._bucket_at) * per_s)
        self._bucket_at = now
        need = min(float(tokens), float(tpm))
        return 0.0 if self._bucket >= need else (need - self._bucket) / per_s

    # -- outcomes -------------------------------------------------------------------------------------
    def _release(self, call: Call) -> None:
        call.done = True
        self.in_flight -= 1
        self._freed.set()

    def _outcome(self, call: Call) -> None:
        """A request came back: the first one's outcome counts as its start (see the module docstring)."""
        if not self._warm:
            self._warm = True
            self._last_start = max(self._last_start, self._clock())
        self._release(call)

    def _answered(self, call: Call, tokens: int) -> None:
        self._outcome(call)
        self.counts.sent += 1
        self.counts.answered += 1
        self.counts.tokens += tokens
        if self.limits.tokens_per_minute:
            self._bucket -= max(0, tokens - call.tokens)  # the estimate was taken at the start
        self.window = min(float(self.limits.max_concurrency), self.window + 1.0 / self.window)

    def _failed(self, call: Call, *, status: int | None, timeout: bool, retry_after: float | None) -> None:
        self._outcome(call)
        self.counts.sent += 1
        if status == 429:
            self.counts.rate_limited += 1
        overloaded = timeout or status in OVERLOAD_STATUS
        if overloaded:
            self.counts.overloaded += 1
            if (
                call.epoch == self._epoch
            ):  # one cut per window: later answers to earlier sends do not cut again
                self.window = max(1.0, self.window / 2.0)
                self._epoch += 1
        if retry_after is not None and retry_after > 0:
            self._paused_until = max(self._paused_until, self._clock() + retry_after)


_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[EndpointKey, Endpoint]] = (
    weakref.WeakKeyDictionary()
)


def endpoint_for(key: EndpointKey, limits: Limits) -> Endpoint:
    """The running loop's endpoint ``key``: created with ``limits``, else tightened to them."""
    table = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    found = table.get(key)
    if found is None:
        found = table[key] = Endpoint(key, limits)
    else:
        found.tighten(limits)
    return found


def endpoints(loop: asyncio.AbstractEventLoop | None = None) -> list[Endpoint]:
    """The endpoints of ``loop`` (default: the running loop)."""
    return list(_ENDPOINTS.get(loop or asyncio.get_running_loop(), {}).values())


def limits_of(model: Any, llm: Any) -> Limits:
    """A model's endpoint limits: ``model.limits`` over the ``llm`` group's; the embedded model (``provider:
    local``) answers one request at a time."""
    own = model.limits
    ceiling = own.max_concurrency or llm.max_concurrency
    if model.provider == "local":
        ceiling = LOCAL_CONCURRENCY
    return Limits(
        ceiling,
        own.requests_per_minute if own.requests_per_minute is not None else llm.requests_per_minute,
        own.tokens_per_minute if own.tokens_per_minute is not None else llm.tokens_per_minute,
    )
