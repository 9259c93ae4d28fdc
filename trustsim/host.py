"""A harness that runs trustsim jobs inside itself (Inspect runs each sample as one job): the two things it
takes over, for the jobs it starts and nothing else.

- ``transport``: every LLM client the job builds sends its calls through it instead of litellm (the request
  store, in-flight de-duplication, concurrency, retries and parsing stay trustsim's); same signature as
  :func:`trustsim.llm.transport.call_litellm`.
- ``on_event``: called with each event line as the run recorder appends it to ``events.jsonl`` (JSON text,
  secrets already redacted), in the job's order, so the harness can show the game as it is played.

The host is a context variable: :func:`hosting` sets it for the code it wraps and every task or
``contextvars``-copying thread started inside, so concurrent jobs of one process each see their own host, and
a job started outside any ``hosting`` block sees none (litellm, no observer)::

    with hosting(Host(transport=my_transport, on_event=print)):
        run_job(cfg, run_dir)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Host:
    """What a harness replaces (``transport``) and observes (``on_event``) in the jobs it runs."""

    transport: Callable[..., Awaitable[Any]] | None = None
    on_event: Callable[[str], None] | None = None


_HOST: ContextVar[Host | None] = ContextVar("trustsim_host", default=None)


def current_host() -> Host | None:
    """The host of the job running in this context (None outside :func:`hosting`)."""
    return _HOST.get()


@contextmanager
def hosting(host: Host) -> Iterator[Host]:
    """Run the wrapped code (a job) under ``host``."""
    token = _HOST.set(host)
    try:
        yield host
    finally:
        _HOST.reset(token)
