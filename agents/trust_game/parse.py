"""Answer schemas and parsers of the LLM player's JSON decisions (bad output is behaviour, never a crash).

The decision kit (trustsim/llm/decision.py) extracts the JSON object; these parsers read it. An invalid
amount raises :class:`InvalidAnswer` carrying what could still be read (the stated expectation and
confidence), so the decision is recorded invalid, with the raw text, and resolved as 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from games.trust_game.rules import Amount, parse_amount
from trustsim.llm.decision import InvalidAnswer, stated_number

ENUM_LIMIT = 200
"""Amount ranges up to this size are constrained with an enum (reliable in llama.cpp grammars)."""


def _amount_schema(maximum: int) -> dict[str, Any]:
    if maximum + 1 <= ENUM_LIMIT:
        return {"type": "integer", "enum": list(range(maximum + 1))}
    return {"type": "integer", "minimum": 0, "maximum": maximum}


def _reasoning(max_chars: int | None) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_chars} if max_chars else {"type": "string"}


def trustor_schema(endowment: int, multiplier: int, reasoning_max_chars: int | None = None) -> dict[str, Any]:
    """JSON schema of the sender's answer (reasoning first, so the model thinks before it commits)."""
    props = {
        "reasoning": _reasoning(reasoning_max_chars),
        "send": _amount_schema(endowment),
        "expected_return": {"type": "number", "minimum": 0, "maximum": multiplier * endowment},
        "p_return_at_least_sent": {"type": "number", "minimum": 0, "maximum": 1},
    }
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def trustee_schema(received: int, asks_next: bool, reasoning_max_chars: int | None = None) -> dict[str, Any]:
    """JSON schema of the responder's answer (``p_next_send_at_least`` only when a next round may follow)."""
    props: dict[str, Any] = {"reasoning": _reasoning(reasoning_max_chars), "return": _amount_schema(received)}
    if asks_next:
        props["p_next_send_at_least"] = {"type": "number", "minimum": 0, "maximum": 1}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed answer: the amount (invalid → 0 with raw text and reason), the stated expectation and p."""

    amount: Amount
    expected: float | None = None
    p: float | None = None
    reasoning: str = ""
    expected_error: str | None = None
    p_error: str | None = None


def _amount(obj: dict[str, Any], key: str, maximum: int) -> Amount:
    if key not in obj:
        return Amount(0, False, "", "missing")
    return parse_amount(obj[key], maximum)


def _reasoning_text(obj: dict[str, Any]) -> str:
    value = obj.get("reasoning")
    return value if isinstance(value, str) else ""


def _done(parsed: Parsed) -> Parsed:
    if not parsed.amount.valid:
        raise InvalidAnswer(parsed.amount.reason or "invalid_amount", parsed)
    return parsed


def trustor_parser(endowment: int, multiplier: int) -> Callable[[dict[str, Any]], Parsed]:
    """Parser of a sender's JSON object; the expectation must lie in 0..k·send (else it is recorded missing)."""

    def parse(obj: dict[str, Any]) -> Parsed:
        amount = _amount(obj, "send", endowment)
        expected, e_err = stated_number(obj.get("expected_return"), multiplier * amount.value)
        p, p_err = stated_number(obj.get("p_return_at_least_sent"))
        return _done(Parsed(amount, expected, p, _reasoning_text(obj), e_err, p_err))

    return parse


def trustee_parser(received: int, asks_next: bool) -> Callable[[dict[str, Any]], Parsed]:
    """Parser of a responder's JSON object."""

    def parse(obj: dict[str, Any]) -> Parsed:
        amount = _amount(obj, "return", received)
        p, p_err = stated_number(obj.get("p_next_send_at_least")) if asks_next else (None, None)
        return _done(Parsed(amount, None, p, _reasoning_text(obj), None, p_err))

    return parse
