"""Parse an LLM player's answer: strict JSON with ``move``, ``p_opponent_cooperates`` and ``reasoning``."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from games.arena.rules import COOPERATE, DEFECT, Move

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "move": {"type": "string", "enum": ["C", "D"]},
        "p_opponent_cooperates": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["reasoning", "move", "p_opponent_cooperates"],
    "additionalProperties": False,
}
"""The JSON schema sent as ``response_format`` (reasoning first, so the model thinks before it commits)."""

_MOVES = {"c": COOPERATE, "cooperate": COOPERATE, "d": DEFECT, "defect": DEFECT}
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """The parsed fields; ``move``/``p`` are None when missing or invalid, with the reason."""

    move: Move | None
    p: float | None
    reasoning: str
    move_error: str | None
    p_error: str | None


def _first_object(text: str) -> dict[str, Any] | None:
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    start = text.find("{")
    if start >= 0:
        depth = 0
        in_str = False
        escape = False
        for i, ch in enumerate(text[start:], start):
            if in_str:
                escape = not escape and ch == "\\"
                if ch == '"' and not escape:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    candidates.append(text[start : i + 1])
                    break
    for c in candidates:
        try:
            obj = json.loads(c)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def parse_probability(value: Any) -> tuple[float | None, str | None]:
    """A probability in [0, 1] from a JSON number or numeric string; (None, reason) otherwise.

    Values outside [0, 1] (e.g. percentages) are rejected, never rescaled.
    """
    if value is None:
        return None, "missing"
    if isinstance(value, bool):
        return None, "not_a_number"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None, "not_a_number"
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None, "not_a_number"
    if not 0.0 <= value <= 1.0:
        return None, "out_of_range"
    return float(value), None


def parse_answer(text: str) -> ParsedAnswer:
    """Parse an answer; never raises (a malformed answer is behaviour, recorded as invalid)."""
    obj = _first_object(text or "")
    if obj is None:
        return ParsedAnswer(None, None, "", "unparseable", "unparseable")
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    raw_move = obj.get("move")
    move = _MOVES.get(raw_move.strip().lower()) if isinstance(raw_move, str) else None
    move_error = None if move is not None else ("missing_move" if raw_move is None else "bad_move")
    p, p_error = parse_probability(obj.get("p_opponent_cooperates"))
    return ParsedAnswer(move, p, reasoning, move_error, p_error)
