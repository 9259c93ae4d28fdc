"""Ask an extractor model for the probability a reasoning text implies (strict JSON, via the LLM layer)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trustsim.extract.items import ReasoningItem
from trustsim.llm.types import ChatRequest

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"probability": {"type": ["number", "null"], "minimum": 0, "maximum": 1}},
    "required": ["probability"],
    "additionalProperties": False,
}
SYSTEM = (
    "You read a player's private reasoning from a game and report the probability the writer implicitly "
    "assigns to an event. Use only the text. Answer with one JSON object: "
    '{"probability": <number between 0 and 1>} or {"probability": null} if the text implies nothing about it.'
)
MAX_TEXT_CHARS = 4000


def messages(item: ReasoningItem) -> list[dict[str, str]]:
    """The extraction request for one reasoning text (long texts keep their last ``MAX_TEXT_CHARS``)."""
    text = item.text[-MAX_TEXT_CHARS:]
    user = (
        f"Reasoning:\n<<<\n{text}\n>>>\n\nWhat probability does the writer assign to the event {item.question}? "
        "JSON only:"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_probability(text: str) -> tuple[float | None, str | None]:
    """``(p, None)`` for a strict JSON answer with a probability in [0, 1]; ``(None, reason)`` otherwise.

    An explicit null is ``no_implied_probability``; anything else that is not the schema is ``unparseable``,
    ``out_of_range`` or ``not_a_number``. Nothing is rescaled or defaulted.
    """
    try:
        obj = json.loads((text or "").strip())
    except json.JSONDecodeError:
        return None, "unparseable"
    if not isinstance(obj, dict) or "probability" not in obj:
        return None, "unparseable"
    v = obj["probability"]
    if v is None:
        return None, "no_implied_probability"
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None, "not_a_number"
    if not 0.0 <= v <= 1.0:
        return None, "out_of_range"
    return float(v), None


@dataclass(frozen=True, slots=True)
class Extraction:
    """The extractor's answer for one item."""

    item: ReasoningItem
    p: float | None
    reason: str | None
    raw: str
    cached: bool


def request_params(structured_output: str) -> dict[str, Any]:
    """``response_format`` for the extractor: JSON schema, JSON object, or nothing."""
    if structured_output == "schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "implied_probability", "schema": SCHEMA, "strict": True},
            }
        }
    if structured_output == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


async def extract(
    items: Sequence[ReasoningItem],
    client: Any,
    model: str,
    *,
    structured_output: str = "schema",
    on_done: Callable[[Extraction], None] | None = None,
    max_tokens: int = 40,
) -> list[Extraction]:
    """Extract every item concurrently (the client limits concurrency; repeats come from its store)."""
    params = {"max_tokens": max_tokens, **request_params(structured_output)}

    async def one(item: ReasoningItem) -> Extraction:
        resp = await client.complete(
            ChatRequest(model=model, messages=messages(item), params=params, purpose="extract")
        )
        p, reason = parse_probability(resp.text)
        ex = Extraction(item, p, reason, resp.text, resp.cached)
        if on_done is not None:
            on_done(ex)
        return ex

    return list(await asyncio.gather(*(one(i) for i in items)))
