"""Request and response value types of the LLM layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ChatRequest:
    """One chat-completion request.

    Attributes:
        model: the configured model name (``cfg.model.name``) or a litellm model id.
        messages: OpenAI-style chat messages.
        params: generation settings overriding the model config's (``temperature``, ``max_tokens``,
            ``response_format``, ``seed``, ``mock_response`` in tests, ...).
        sample: replicate/sample index; part of the cache key so repeated samples are distinct.
        purpose: what the call is for (``decision``, ``solve``, ``reflection``); recorded, not keyed.
        stable_chars: how many leading characters of the last message's text stay the same across the
            caller's requests (with every message before it: the stable prefix). With ``model.prompt_cache``
            the client marks that prefix for the provider's prompt cache (trustsim.llm.caching); 0: none
            declared, the request goes as it is.
    """

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    sample: int = 0
    purpose: str = "decision"
    stable_chars: int = 0


@dataclass(slots=True)
class ChatResponse:
    """The text of a completion plus its accounting. ``cached`` is True when served by the store; ``key`` is the
    request's request-store key (None when no store client answered: a stand-in or a host's transport).
    ``cached_tokens`` (read from the provider's prompt cache) and ``cache_write_tokens`` (written to it) are
    part of ``prompt_tokens``."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    cost_usd: float
    key: str | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0
