"""Parse a model's answer into an escape-room action: JSON (bare, in prose or in code fences) or the
reference ``DECISION: ... / REASONING: ...`` form. Anything else is invalid, with the reason kept."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from games.escape_room.types import Action
from trustsim.llm.decision import json_objects

MAX_PARSE_CHARS = 50_000  # the DECISION: form is read from an answer's first 50,000 characters only
MAX_JSON_STARTS = 50  # '{' positions tried before giving up (bounded work on hostile text)
PUZZLES = (1, 2, 3, 4)
_DECISION = re.compile(r"DECISION\s*:\s*(?P<body>[^\n]*)", re.IGNORECASE)
_REASONING = re.compile(r"REASONING\s*:\s*(?P<body>.*?)(?=\n\s*DECISION\s*:|\Z)", re.IGNORECASE | re.DOTALL)
_SLOT = re.compile(r"^\s*Q?\s*([1-9])\s*$", re.IGNORECASE)
_LABEL = re.compile(r"Q([1-9])-[A-Za-z0-9]+")


@dataclass(slots=True)
class Parsed:
    """A parse result: ``action`` is None when the answer is invalid (``error`` says why)."""

    action: Action | None
    reasoning: str | None = None
    confidence: dict[int, float] | None = None
    trusted: dict[int, str] | None = None
    error: str | None = None
    form: str = "none"  # json | decision | none


def _slot(key: Any) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key if key in PUZZLES else None
    if isinstance(key, str):
        m = _SLOT.match(key)
        if m and int(m.group(1)) in PUZZLES:
            return int(m.group(1))
    return None


def _labels(value: Any) -> dict[int, str] | None:
    """A ``{"Q1": "Q1-A", ...}`` mapping (or a list of labels) as puzzle index → label."""
    out: dict[int, str] = {}
    if isinstance(value, dict):
        for key, label in value.items():
            k = _slot(key)
            if k is None or not isinstance(label, str):
                return None
            out[k] = label.strip().split("+")[0].strip()
    elif isinstance(value, list):
        for label in value:
            m = _LABEL.match(str(label).strip())
            if not m:
                return None
            out[int(m.group(1))] = m.group(0)
    else:
        return None
    return out


def _partial_labels(value: Any) -> dict[int, str]:
    """The well-formed entries of a password (puzzle index → label); malformed entries are left out."""
    items: list[Any]
    if isinstance(value, dict):
        items = [{k: v} for k, v in value.items()]
    elif isinstance(value, list):
        items = [[v] for v in value]
    else:
        return {}
    out: dict[int, str] = {}
    for item in items:
        for k, label in (_labels(item) or {}).items():
            out[k] = label
    return out


def _confidence(value: Any) -> dict[int, float] | None:
    """Stated probabilities per puzzle; values outside [0, 1] or not numbers are left out."""
    if not isinstance(value, dict):
        return None
    out: dict[int, float] = {}
    for key, p in value.items():
        k = _slot(key)
        if k is None or isinstance(p, bool):
            continue
        try:
            p = float(p)
        except (TypeError, ValueError):
            continue
        if math.isfinite(p) and 0.0 <= p <= 1.0:
            out[k] = p
    return out


def _from_object(obj: dict[str, Any]) -> Parsed:
    kind = str(obj.get("action", "")).strip().lower()
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else None
    confidence = _confidence(obj.get("confidence"))
    trusted = _labels(obj.get("trusted")) if obj.get("trusted") is not None else None

    def parsed(
        action: Action | None, trusted: dict[int, str] | None = None, error: str | None = None
    ) -> Parsed:
        return Parsed(action, reasoning, confidence, trusted, error, form="json")

    if kind == "pass":
        return parsed(Action.pass_(), trusted=trusted)
    if kind == "verify":
        target = _slot(obj.get("target"))
        raw = obj.get("target")
        if target is None and isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) < 10**6:
            target = raw  # a well-formed move with a bad target: the game names it (bad_target)
        if target is None:
            return parsed(None, error=f"verify needs a target puzzle 1-4, got {obj.get('target')!r}")
        return parsed(Action.verify(target), trusted=trusted)
    if kind == "volunteer":
        # A well-formed volunteer with an empty, partial or malformed password stays a volunteer: the game
        # names what is wrong (incomplete_password / missing_capsule), not "unparseable".
        password = _partial_labels(obj.get("password"))
        return parsed(Action.volunteer(password), trusted=trusted or dict(password) or None)
    return parsed(None, error=f"unknown action {str(obj.get('action'))[:40]!r}")


def _json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects found in the text (the decision kit's bounded, linear scan: whole text, fences, then
    objects at each '{')."""
    return list(json_objects(text))


def _decision_form(text: str) -> Parsed | None:
    m = _DECISION.search(text)
    if not m:
        return None
    body = m.group("body").strip().strip("*").strip()
    r = _REASONING.search(text)
    reasoning = r.group("body").strip() if r else None
    low = body.lower()
    if low.startswith("pass"):
        return Parsed(Action.pass_(), reasoning=reasoning, form="decision")
    if low.startswith("verify"):
        target = re.search(r"Q?\s*([1-9])", body[6:], re.IGNORECASE)
        k = int(target.group(1)) if target else None
        if k not in PUZZLES:
            return Parsed(
                None, reasoning=reasoning, error=f"bad verify target in {body[:60]!r}", form="decision"
            )
        return Parsed(Action.verify(k), reasoning=reasoning, form="decision")
    if low.startswith("volunteer"):
        password = {int(x.group(1)): x.group(0) for x in _LABEL.finditer(body)}
        if not password:
            return Parsed(
                None, reasoning=reasoning, error=f"no capsule labels in {body[:60]!r}", form="decision"
            )
        return Parsed(
            Action.volunteer(password), reasoning=reasoning, trusted=dict(password), form="decision"
        )
    return Parsed(None, reasoning=reasoning, error=f"unknown DECISION {body[:60]!r}", form="decision")


def parse_decision(text: str | None) -> Parsed:
    """Parse a decision answer. Never raises: bad input gives ``Parsed(action=None, error=...)``."""
    if not text or not text.strip():
        return Parsed(None, error="empty answer")
    objects = _json_objects(text)  # bounded by the decision kit (a long, well-formed answer is read whole)
    text = text[:MAX_PARSE_CHARS]
    first_error: Parsed | None = None
    for obj in objects:
        if "action" not in obj:
            continue
        parsed = _from_object(obj)
        if parsed.action is not None:
            return parsed
        first_error = first_error or parsed
    decision = _decision_form(text)
    if decision is not None and (decision.action is not None or first_error is None):
        return decision
    if first_error is not None:
        return first_error
    return Parsed(None, error="no JSON object with an 'action' and no 'DECISION:' line")


def parse_integer(text: str | None) -> int | None:
    """The answer of a solve call: ``{"answer": n}`` or the first integer in the text."""
    if not text:
        return None
    text = text[:1000]
    for obj in _json_objects(text):
        value = obj.get("answer")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,9}\s*", value):
            return int(value)
    m = re.search(r"-?\d{1,9}", text)
    return int(m.group(0)) if m else None
