"""Parse a model's JSON answer ``{"action", "confidence", "reasoning"}`` against the admissible actions."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
# A truncated JSON answer (the token budget ran out inside "reasoning") still names its action.
_FIELD = re.compile(r'"(action|confidence)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9.]+)')


@dataclass(frozen=True)
class Parsed:
    """The parsed answer; ``action`` is None with an ``invalid_reason`` when unusable."""

    action: str | None
    confidence: float | None
    reasoning: str
    invalid_reason: str = ""


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        match = _OBJECT.search(text)
        if match is not None:
            try:
                return json.loads(match.group(0))
            except json.JSONDecodeError:
                pass
        if not text.lstrip().startswith("{"):
            return None
        fields: dict[str, Any] = {}
        for key, value in _FIELD.findall(text):
            try:
                fields.setdefault(key, json.loads(value))
            except json.JSONDecodeError:
                continue
        return fields or None


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


def parse_answer(text: str, actions: Sequence[str]) -> Parsed:
    """Parse ``text``; empty, unparseable, ambiguous or illegal answers give ``action=None``.

    The action must equal an admissible name (case and surrounding whitespace ignored). An answer naming
    two or more admissible actions is ambiguous; any other name is illegal.
    """
    if not text or not text.strip():
        return Parsed(None, None, "", "empty")
    obj = _load(text.strip())
    if not isinstance(obj, dict):
        return Parsed(None, None, "", "unparseable")
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    conf = _confidence(obj.get("confidence"))
    raw = obj.get("action")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return Parsed(None, conf, reasoning, "empty_action")
    if not isinstance(raw, str):
        return Parsed(None, conf, reasoning, "ambiguous" if isinstance(raw, list) else "unparseable")
    wanted = raw.strip().strip("'\"`").lower()
    by_lower = {a.lower(): a for a in actions}
    if wanted in by_lower:
        return Parsed(by_lower[wanted], conf, reasoning)
    named = [a for a in actions if re.search(rf"(?<![\w]){re.escape(a.lower())}(?![\w])", wanted)]
    return Parsed(None, conf, reasoning, "ambiguous" if len(named) >= 2 else "illegal_action")
