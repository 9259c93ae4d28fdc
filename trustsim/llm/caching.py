"""Providers' prompt caches: which models take ``model.prompt_cache``, and the request it sends.

OpenAI, Gemini (2.5 and later) and DeepSeek cache a repeated prompt prefix by themselves and bill it at a
fraction of the input price; Anthropic caches only what the request marks with ``cache_control``. A request
declares its stable prefix (``ChatRequest.stable_chars``: every message before the last, and the first
characters of the last); with ``model.prompt_cache: true`` on an Anthropic model the client sends it with
two cache breakpoints: the end of the messages before the last (the rules) and the end of the stable part of
the last (the memory and the seat's unchanging facts), as content blocks. Requests that declare no stable
prefix (the ``reference`` prompt style: the study's requests, byte for byte) go as they are.

The trade-off (docs/llm.md): Anthropic bills a cache write at 1.25 x the input price and a read at 0.1 x;
a prefix shorter than the model's minimum (1,024 tokens for Sonnet and Opus, 2,048 for Haiku) is not cached,
and an entry lives 5 minutes after its last use. Caching changes what is billed, not what the model is asked.
"""

from __future__ import annotations

import bisect
from typing import Any

CACHE_CONTROL = {"type": "ephemeral"}
MIN_CACHED_TOKENS = 1024
"""The shortest prefix providers cache (OpenAI, Gemini's implicit cache, Anthropic's Sonnet and Opus)."""
CACHE_STEP_TOKENS = 128
"""OpenAI caches a prefix in steps of this many tokens."""


def marks_prompt_cache(litellm_model: str) -> bool:
    """Whether a model takes ``cache_control`` marks (Anthropic's models, also through Bedrock and Vertex AI)."""
    provider, _, name = litellm_model.partition("/")
    return provider == "anthropic" or "claude" in name.lower()


def mark_stable_prefix(messages: list[dict[str, Any]], stable_chars: int) -> list[dict[str, Any]]:
    """``messages`` with cache breakpoints at the end of the messages before the last and after the first
    ``stable_chars`` characters of the last (as text content blocks); unchanged without a stable prefix."""
    if stable_chars <= 0 or not messages or not all(isinstance(m.get("content"), str) for m in messages):
        return messages
    *head, last = messages
    out = [dict(m) for m in head]
    if out:
        out[-1]["content"] = [{"type": "text", "text": out[-1]["content"], "cache_control": CACHE_CONTROL}]
    text = last["content"]
    stable, rest = text[:stable_chars], text[stable_chars:]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": stable, "cache_control": CACHE_CONTROL}]
    if rest:
        blocks.append({"type": "text", "text": rest})
    out.append({**last, "content": blocks})
    return out


def cacheable_tokens(shared_tokens: float) -> int:
    """Tokens of a shared prefix a provider serves from its cache: none below :data:`MIN_CACHED_TOKENS`, else
    whole steps of :data:`CACHE_STEP_TOKENS`."""
    tokens = int(shared_tokens)
    return tokens // CACHE_STEP_TOKENS * CACHE_STEP_TOKENS if tokens >= MIN_CACHED_TOKENS else 0


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """A request's prompt as one text, in the order a provider reads it (content blocks joined)."""
    return "".join(f"\x00{m.get('role')}\x00{_text(m.get('content'))}" for m in messages)


def marked_chars(messages: list[dict[str, Any]]) -> int:
    """Length of :func:`prompt_text` up to the end of the last block marked with ``cache_control`` (0: none)."""
    length = end = 0
    for m in messages:
        length += len(f"\x00{m.get('role')}\x00")
        content = m.get("content")
        for block in content if isinstance(content, list) else [content]:
            length += len(_text(block))
            if isinstance(block, dict) and block.get("cache_control"):
                end = length
    return end


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(_text(block) for block in content)
    if isinstance(content, dict):
        return str(content.get("text") or "")
    return "" if content is None else str(content)


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (binary search on slice comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """The prompts one model was sent, as a provider's prefix cache sees them: :meth:`shared` gives how many
    leading characters of a new prompt an earlier one held (then remembers it). Entries never expire."""

    def __init__(self) -> None:
        self._seen: list[str] = []

    def shared(self, text: str) -> int:
        i = bisect.bisect_left(self._seen, text)  # the longest common prefix is with a sorted neighbour
        best = max(
            (common_prefix(text, self._seen[j]) for j in (i - 1, i) if 0 <= j < len(self._seen)), default=0
        )
        bisect.insort(self._seen, text)
        return best
