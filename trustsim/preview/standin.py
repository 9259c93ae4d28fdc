"""The preview's stand-in model: a valid answer for every request, and token counts through litellm.

A stand-in answer has the shape the decision kit asked for (:data:`trustsim.llm.decision.CURRENT_ASK`):

- a JSON answer is an instance of the answer's schema: the first ``oneOf``/``anyOf`` variant, the last
  ``enum`` value, an integer's maximum, a number's midpoint, a short string. In the shipped games this plays
  the longest game: the escape room's first variant is ``pass`` (no escape, so games run their full length),
  the trust game's sender sends the whole endowment (so the responder is always asked);
- a free-text answer is, by purpose, ``DECISION: Pass`` (a decision in the reference study's text format),
  ``0`` (a puzzle answer) or a one-line reflection.

Completion tokens are estimated per request from the schema (the longest answer it allows, every string at
its ``maxLength``) when the schema bounds it, else from the request's token cap (``max_tokens``,
``max_completion_tokens``, else the model's output limit in litellm's map).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trustsim.llm.decision import Ask, InvalidAnswer, extract_json, required_keys
from trustsim.llm.transport import get_litellm

STANDIN_TEXT = "preview stand-in answer"
TOKEN_CAP_PARAMS = ("max_completion_tokens", "max_tokens", "max_output_tokens")
FILLER = "the partner was right so I trust it "  # realistic English for counting a long string's tokens


@dataclass(frozen=True)
class Play:
    """How the stand-in plays where the default would understate a run: ``prefer`` picks the ``oneOf``
    variant whose property has this ``const`` value (e.g. ``{"action": "verify"}``); ``text`` replaces the
    free-text answer of a purpose; ``short`` names the purposes whose answers are as short as the stand-in's
    (the preview's prior of their length)."""

    prefer: Mapping[str, Any] = field(default_factory=dict)
    text: Mapping[str, str] = field(default_factory=dict)
    short: frozenset[str] = frozenset()


def _chosen(variants: list[Any], prefer: Mapping[str, Any]) -> Any:
    for variant in variants:
        props = variant.get("properties") if isinstance(variant, Mapping) else None
        if isinstance(props, Mapping) and any(
            isinstance(props.get(k), Mapping) and props[k].get("const") == v for k, v in prefer.items()
        ):
            return variant
    return variants[0]


def instance(schema: Any, prefer: Mapping[str, Any] | None = None) -> Any:
    """A small value valid under a JSON schema (the subset the games use)."""
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return list(schema["enum"])[-1]
    for key in ("oneOf", "anyOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list) and variants:
            return instance(_chosen(variants, prefer or {}), prefer)
    kind = _type(schema)
    if kind == "object":
        return {str(k): instance(v, prefer) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [instance(schema.get("items"), prefer) for _ in range(int(schema.get("minItems") or 0))]
    if kind == "integer":
        for bound in ("maximum", "minimum"):
            if isinstance(schema.get(bound), int | float):
                return int(schema[bound])
        return 0
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, int | float) and isinstance(high, int | float):
            return (low + high) / 2
        return float(low if isinstance(low, int | float) else high if isinstance(high, int | float) else 0)
    if kind == "string":
        text = STANDIN_TEXT
        cap = schema.get("maxLength")
        if isinstance(cap, int):
            text = text[:cap]
        return text.ljust(int(schema.get("minLength") or 0), ".")
    if kind == "boolean":
        return True
    return None


def longest(schema: Any) -> Any:
    """The longest value a schema allows as a stand-in for counting tokens (strings at ``maxLength``);
    raises :class:`ValueError` when a string is unbounded (the request's token cap bounds it instead)."""
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return max(list(schema["enum"]), key=lambda v: len(json.dumps(v)))
    for key in ("oneOf", "anyOf"):
        variants = schema.get(key)
        if isinstance(variants, list) and variants:
            values = [longest(v) for v in variants]
            return max(values, key=lambda v: len(json.dumps(v, default=str)))
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return longest(schema["allOf"][0])
    kind = _type(schema)
    if kind == "object":
        return {str(k): longest(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        if not isinstance(schema.get("maxItems"), int):
            raise ValueError("unbounded array")
        return [longest(schema.get("items")) for _ in range(schema["maxItems"])]
    if kind == "string":
        cap = schema.get("maxLength")
        if not isinstance(cap, int):
            raise ValueError("unbounded string")
        return (FILLER * (cap // len(FILLER) + 1))[:cap]
    return instance(schema)


def _type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        return "object"
    return kind if isinstance(kind, str) else None


def answer(ask: Ask | None, params: Mapping[str, Any], play: Play | None = None) -> tuple[str, bool]:
    """The stand-in answer's text and whether the kit's parser accepts it."""
    play = play or Play()
    schema = ask.schema if ask is not None else _schema_param(params)
    if ask is not None and ask.format == "text":
        text = play.text.get(ask.purpose) or STANDIN_TEXT
        data: Any = text
    elif schema:
        data = instance(schema, play.prefer)
        text = json.dumps(data, ensure_ascii=False)
        data = extract_json(text, required_keys(schema))
    else:
        return STANDIN_TEXT, True
    if ask is None:
        return text, True
    try:
        ask.parse(data)
    except InvalidAnswer:
        return text, False
    return text, True


def _schema_param(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping) and isinstance(fmt.get("json_schema"), Mapping):
        schema = fmt["json_schema"].get("schema")
        return schema if isinstance(schema, Mapping) else None
    return None


def token_cap(params: Mapping[str, Any], model_limit: int | None) -> int | None:
    """The request's completion-token cap: its ``max_completion_tokens``/``max_tokens``, else the model's
    output limit (litellm's map); None when neither is known."""
    for key in TOKEN_CAP_PARAMS:
        value = params.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return model_limit


def count_messages(model: str, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> int:
    """Prompt tokens: the messages (litellm's token counter for this model) plus a sent answer schema."""
    litellm = get_litellm()
    tokens = int(litellm.token_counter(model=model, messages=messages))
    fmt = params.get("response_format")
    if fmt:
        tokens += count_text(model, json.dumps(fmt, ensure_ascii=False, default=str))
    return tokens


def count_text(model: str, text: str) -> int:
    """Tokens of a text (litellm's token counter for this model)."""
    return int(get_litellm().token_counter(model=model, text=text)) if text else 0


def schema_tokens(model: str, ask: Ask | None) -> int | None:
    """Tokens of the longest answer the schema allows (None: no schema, or it leaves a string unbounded)."""
    if ask is None or ask.format != "json" or not ask.schema:
        return None
    try:
        value = longest(ask.schema)
    except ValueError:
        return None
    return count_text(model, json.dumps(value, ensure_ascii=False, default=str))
