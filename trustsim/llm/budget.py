"""Spend: the price of each sent call, and the cap ``llm.budget_usd`` (per job, or per shared store).

A call's cost comes from the model config's ``price`` (USD per million input and output tokens: local and
OpenAI-compatible servers, models newer than litellm's price map) when it declares one, is 0 for the
embedded model, and otherwise litellm's (its price map). Every stored response keeps its cost (``cost_usd``)
and the job that sent it (``job``, the config hash), so the spend so far is a query on the store: a re-run
or a resumed job counts what its earlier attempts spent.

When the spend reaches the cap, no further request is sent: requests being sent finish (and are stored by
the client), then :class:`BudgetReached` stops the job (``failed``, exit code 6).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import weakref
from typing import Any, NoReturn

from trustsim.errors import TrustsimError

EXIT_BUDGET = 6
SCOPES = ("job", "store")
REFRESH_S = 1.0  # how often the spend recorded by other clients and jobs is re-read from the store


class BudgetReached(TrustsimError):
    """The spend recorded against ``llm.budget_usd`` reached the cap; no further request was sent."""

    exit_code = EXIT_BUDGET

    def __init__(self, spent: float, cap: float, scope: str, where: str) -> None:
        self.spent = spent
        self.cap = cap
        self.scope = scope
        what = "this job's spend" if scope == "job" else f"the spend recorded in the request store {where}"
        super().__init__(f"budget reached: {what} is ${spent:.4f} of llm.budget_usd=${cap:g}")
        self.resume = (
            "raise llm.budget_usd (or drop it) and re-run the same command to resume: stored responses are "
            "replayed, not sent (nor paid) again"
        )


def price_per_mtok(model: Any) -> tuple[float, float] | None:
    """(input, output) USD per million tokens from ``model.price``, or None when the model declares none."""
    price = getattr(model, "price", None)
    if not price:
        return None
    if isinstance(price, dict):
        return float(price.get("input_per_mtok") or 0), float(price.get("output_per_mtok") or 0)
    return float(getattr(price, "input_per_mtok", 0) or 0), float(getattr(price, "output_per_mtok", 0) or 0)


def call_cost(
    model: Any,
    litellm_cost: float,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float:
    """The cost of one sent call, in the order preview estimates it: the model config's ``price`` when it
    declares one (prompt tokens read from or written to the provider's cache at its ``cache_read_per_mtok`` /
    ``cache_write_per_mtok``, else the input price); 0 for the embedded model; else litellm's, which prices
    cached tokens from its map (0 for a model its price map does not know)."""
    price = price_per_mtok(model)
    if price is not None:
        read, write = cache_prices(model, price[0])
        fresh = max(0, prompt_tokens - cached_tokens - cache_write_tokens)
        return (
            fresh * price[0]
            + cached_tokens * read
            + cache_write_tokens * write
            + completion_tokens * price[1]
        ) / 1e6
    if getattr(model, "provider", "litellm") == "local":
        return 0.0
    return float(litellm_cost) if litellm_cost and litellm_cost > 0 else 0.0


def cache_prices(model: Any, input_per_mtok: float) -> tuple[float, float]:
    """USD per million prompt tokens read from and written to the cache, from ``model.price`` (each missing
    one: the input price)."""
    price = getattr(model, "price", None)
    get = price.get if isinstance(price, dict) else lambda name: getattr(price, name, None)
    read, write = get("cache_read_per_mtok"), get("cache_write_per_mtok")
    return (
        float(read) if read is not None else input_per_mtok,
        float(write) if write is not None else input_per_mtok,
    )


class _Ledger:
    """Spend and calls being sent, shared by the clients of one store object (a job's clients: a mixed
    team's seats share the job's store), so one seat reaching the cap waits for every seat's calls."""

    def __init__(self) -> None:
        self.reached = False
        self.sending: set[asyncio.Task[Any] | None] = set()
        self.read_at = -1e9
        self.read = 0.0
        self.since = 0.0  # spend priced by these clients since the last read of the store


_LEDGERS: weakref.WeakKeyDictionary[Any, _Ledger] = weakref.WeakKeyDictionary()


def _ledger_for(store: Any) -> _Ledger:
    if store is None:
        return _Ledger()
    try:
        return _LEDGERS.setdefault(store, _Ledger())
    except TypeError:  # an object that cannot be weakly referenced: its own ledger
        return _Ledger()


class Budget:
    """One client's view of the spend and the cap (``llm.budget_usd``, ``llm.budget_scope``).

    ``job`` is the job's config hash, recorded with every stored response; ``store`` is the client's
    request store (a file or a shard directory). Clients sharing a store object share the spend and the
    calls in flight. Without a cap, it only prices calls.
    """

    def __init__(self, model: Any, llm: Any, store: Any, job: str | None = None) -> None:
        self.model = model
        self.cap: float | None = getattr(llm, "budget_usd", None)
        self.scope: str = getattr(llm, "budget_scope", "job")
        self.store = store
        self.job = job
        self._ledger = _ledger_for(store)

    @property
    def reached(self) -> bool:
        return self._ledger.reached

    def price(self, result: Any) -> Any:
        """``result`` (a transport ``CallResult``) with its cost set, counted towards the spend."""
        cost = call_cost(
            self.model,
            result.cost_usd,
            result.prompt_tokens,
            result.completion_tokens,
            result.cached_tokens,
            result.cache_write_tokens,
        )
        self._ledger.since += cost
        return result if cost == result.cost_usd else dataclasses.replace(result, cost_usd=cost)

    def spent(self) -> float:
        """The spend the cap is compared with: the store's record (re-read at most every second) plus what
        these clients priced since."""
        ledger = self._ledger
        if self.store is None or (self.scope == "job" and self.job is None):
            return ledger.since  # outside a job (no job id in the store): these clients' own spend
        now = time.monotonic()
        if now - ledger.read_at >= REFRESH_S:
            ledger.read = float(self.store.spend(None if self.scope == "store" else self.job))
            ledger.since = 0.0
            ledger.read_at = now
        return ledger.read + ledger.since

    def admit(self) -> bool:
        """Called before a request is first sent. Under the cap (or without one): True, and the request counts
        as being sent until :meth:`finished`. At the cap: False; the caller sends nothing and awaits
        :meth:`refuse`."""
        if self.cap is None:
            return True
        ledger = self._ledger
        if not ledger.reached and self.spent() >= self.cap:
            ledger.reached = True
        if ledger.reached:
            return False
        ledger.sending.add(asyncio.current_task())
        return True

    async def refuse(self) -> NoReturn:
        """At the cap: wait until the requests being sent have finished (they are stored), then raise
        :class:`BudgetReached`."""
        ledger = self._ledger
        while ledger.sending:
            await asyncio.sleep(0.02)
        ledger.read_at = -1e9
        where = str(getattr(self.store, "path", ""))
        assert self.cap is not None
        raise BudgetReached(self.spent(), self.cap, self.scope, where)

    def finished(self) -> None:
        """The current task's request is done (answered and stored, or failed)."""
        self._ledger.sending.discard(asyncio.current_task())
