"""Read a model's answer ``{"action", "confidence", "reasoning"}`` against the admissible actions.

The decision kit (``trustsim.llm.decision``) finds the JSON object in the model's text; :func:`read_answer`
maps it to the reliance decision. :func:`parse_answer` does both for a text (tests, offline checks).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trustsim.llm.decision import InvalidAnswer, extract_json


@dataclass(frozen=True)
class Parsed:
    """The parsed answer; ``action`` is None with an ``invalid_reason`` when unusable."""

    action: str | None
    confidence: float | None
    reasoning: str
    invalid_reason: str = ""


def answer_schema(actions: Sequence[str], max_chars: int) -> dict[str, Any]:
    """The answer's JSON schema (the action enum = this stage's admissible actions)."""
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(actions)},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string", "maxLength": max_chars},
        },
        "required": ["action", "confidence", "reasoning"],
        "additionalProperties": False,
    }


ANSWER_KEYS = ("action", "confidence", "reasoning")


def _confidence(value: Any) -> float | None:
    """A probability in [0, 1]; "80%" and whole numbers up to 100 are read as percentages."""
    percent = False
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            value = float(text.rstrip("%"))
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    value = float(value)
    if percent or (1.0 < value <= 100.0 and value.is_integer()):
        value /= 100.0
    return value if 0.0 <= value <= 1.0 else None


def read_answer(obj: dict[str, Any], actions: Sequence[str]) -> Parsed:
    """The decision in an answer object.

    The action must equal an admissible name (case and surrounding whitespace ignored). An answer naming
    two or more admissible actions is ambiguous; any other name is illegal.

    Raises:
        InvalidAnswer: ``empty_action``, ``ambiguous``, ``unparseable`` or ``illegal_action``; its value is
            the :class:`Parsed` answer with the confidence and reasoning that could be read.
    """
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    conf = _confidence(obj.get("confidence"))
    raw = obj.get("action")

    def invalid(reason: str) -> InvalidAnswer:
        return InvalidAnswer(reason, Parsed(None, conf, reasoning, reason))

    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise invalid("empty_action")
    if not isinstance(raw, str):
        raise invalid("ambiguous" if isinstance(raw, list) else "unparseable")
    wanted = raw.strip().strip("'\"`").lower()
    by_lower = {a.lower(): a for a in actions}
    if wanted in by_lower:
        return Parsed(by_lower[wanted], conf, reasoning)
    named = [a for a in actions if re.search(rf"(?<![\w]){re.escape(a.lower())}(?![\w])", wanted)]
    raise invalid("ambiguous" if len(named) >= 2 else "illegal_action")


def parse_answer(text: str, actions: Sequence[str]) -> Parsed:
    """Parse a text as the kit does; empty, unparseable, ambiguous or illegal answers give ``action=None``."""
    if not text or not text.strip():
        return Parsed(None, None, "", "empty")
    obj = extract_json(text, ANSWER_KEYS)
    if obj is None:
        return Parsed(None, None, "", "unparseable")
    try:
        return read_answer(obj, actions)
    except InvalidAnswer as bad:
        return bad.value
