"""Ask an extractor model for the probability a reasoning text implies (JSON, via the decision kit)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trustsim.extract.items import ReasoningItem
from trustsim.llm.decision import DecisionKit, InvalidAnswer, extract_json

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


def read_probability(obj: dict[str, Any]) -> float:
    """The probability in an answer object; raises :class:`InvalidAnswer` with the reason otherwise.

    An explicit null is ``no_implied_probability``; a missing key ``unparseable``; a value that is not a
    number in [0, 1] ``not_a_number`` or ``out_of_range``. Nothing is rescaled or defaulted.
    """
    if "probability" not in obj:
        raise InvalidAnswer("unparseable")
    v = obj["probability"]
    if v is None:
        raise InvalidAnswer("no_implied_probability")
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise InvalidAnswer("not_a_number")
    if not 0.0 <= v <= 1.0:
        raise InvalidAnswer("out_of_range")
    return float(v)


def parse_probability(text: str) -> tuple[float | None, str | None]:
    """``(p, None)`` for an answer whose JSON object holds a probability in [0, 1]; ``(None, reason)``
    otherwise (the decision kit's reading: ``empty``, ``unparseable``, or :func:`read_probability`'s)."""
    if not text or not text.strip():
        return None, "empty"
    obj = extract_json(text, ("probability",))
    if obj is None:
        return None, "unparseable"
    try:
        return read_probability(obj), None
    except InvalidAnswer as bad:
        return None, bad.reason


@dataclass(frozen=True, slots=True)
class Extraction:
    """The extractor's answer for one item."""

    item: ReasoningItem
    p: float | None
    reason: str | None
    raw: str
    cached: bool


async def extract(
    items: Sequence[ReasoningItem],
    client: Any,
    model: str,
    *,
    model_config: Any = None,
    on_done: Callable[[Extraction], None] | None = None,
    max_tokens: int = 40,
) -> list[Extraction]:
    """Extract every item concurrently (the client limits concurrency; repeats come from its store).

    The extractor model is asked through the decision kit: JSON schema, JSON mode or unconstrained as its
    model config (``model_config``, default ``client.model``) says, as in every game.
    """
    kit = DecisionKit(client, model_config, request_model=model, params={"max_tokens": max_tokens})

    async def one(item: ReasoningItem) -> Extraction:
        answer = await kit.decide(
            messages(item), read_probability, schema=SCHEMA, name="implied_probability", purpose="extract"
        )
        ex = Extraction(
            item, answer.value if answer.valid else None, answer.invalid_reason, answer.raw, answer.cached
        )
        if on_done is not None:
            on_done(ex)
        return ex

    return list(await asyncio.gather(*(one(i) for i in items)))
