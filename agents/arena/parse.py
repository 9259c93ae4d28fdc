"""Read an LLM player's answer: JSON with ``move``, ``p_opponent_cooperates`` and ``reasoning``.

The decision kit (``trustsim.llm.decision``) finds the JSON object in the model's text; :func:`read_answer`
maps it to the move and the stated probability. :func:`parse_answer` does both for a text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.arena.rules import COOPERATE, DEFECT, Move
from trustsim.llm.decision import InvalidAnswer, extract_json, stated_number

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
"""The answer's JSON schema (reasoning first, so the model thinks before it commits)."""

_MOVES = {"c": COOPERATE, "cooperate": COOPERATE, "d": DEFECT, "defect": DEFECT}


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """The parsed fields; ``move``/``p`` are None when missing or invalid, with the reason."""

    move: Move | None
    p: float | None
    reasoning: str
    move_error: str | None
    p_error: str | None


def read_answer(obj: dict[str, Any]) -> ParsedAnswer:
    """The move and probability in an answer object; a bad probability alone leaves the move valid.

    Raises:
        InvalidAnswer: ``missing_move`` or ``bad_move``; its value is the :class:`ParsedAnswer` (the
            probability may still be usable).
    """
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    raw_move = obj.get("move")
    move = _MOVES.get(raw_move.strip().lower()) if isinstance(raw_move, str) else None
    p, p_error = stated_number(obj.get("p_opponent_cooperates"))
    if move is None:
        reason = "missing_move" if raw_move is None else "bad_move"
        raise InvalidAnswer(reason, ParsedAnswer(None, p, reasoning, reason, p_error))
    return ParsedAnswer(move, p, reasoning, None, p_error)


def unusable(reason: str) -> ParsedAnswer:
    """The parse of an answer with no JSON object at all (``empty``, ``unparseable``)."""
    return ParsedAnswer(None, None, "", reason, reason)


def parse_answer(text: str) -> ParsedAnswer:
    """Parse a text as the kit does; never raises (a malformed answer is behaviour, recorded as invalid)."""
    if not text or not text.strip():
        return unusable("empty")
    obj = extract_json(text, tuple(ANSWER_SCHEMA["required"]))
    if obj is None:
        return unusable("unparseable")
    try:
        return read_answer(obj)
    except InvalidAnswer as bad:
        return bad.value
