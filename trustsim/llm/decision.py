"""The LLM decision kit: messages → answer format → constrained or unconstrained call → parse → a value.

Every game's LLM agent asks its model through one :class:`DecisionKit`, built once per job from the
client and the model config. How a model decodes is decided here, from the model config only, so a
model is asked the same way in every game:

- ``format="json"`` with ``model.structured_output``:

  - ``schema``: the game's JSON schema goes out as ``response_format: json_schema`` (``strict`` from
    ``model.strict_schema``): constrained decoding where the provider supports it;
  - ``json_object``: ``response_format: json_object`` (JSON mode; the prompt states the shape);
  - ``none``: no ``response_format`` (the prompt states the shape; unconstrained decoding).

  In every mode the answer goes through the same robust JSON extraction (bare, fenced or inside prose;
  a truncated object's complete fields are salvaged), then the game's parser.
- ``format="text"``: free text, never constrained (e.g. the reference study's ``DECISION:`` /
  ``REASONING:`` lines); the game's parser reads the text.

Malformed output is behaviour, not a fault: the :class:`Answer` is ``valid=False`` with the reason and the
raw text. Provider faults stay exceptions (the client retries them; a persistent one stops the run).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from trustsim.errors import ConfigError
from trustsim.llm.config import ModelConfig, parse_model_config
from trustsim.llm.types import ChatRequest
from trustsim.seeding import SAMPLE_BITS

T = TypeVar("T")
Format = Literal["json", "text"]

MAX_PARSE_CHARS = 50_000  # an answer's objects must start within its first 50,000 characters
MAX_OBJECT_CHARS = 1_000_000  # ... and one may run this far (a well-formed answer with a long reasoning)
MAX_JSON_STARTS = 50  # '{' positions tried before giving up (bounded work on hostile text)
_DECODER = json.JSONDecoder(strict=False)  # raw control characters inside strings are tolerated; stateless
_FENCE_OPEN = re.compile(r"```(?:json|JSON)?")
# A complete "key": scalar pair (used to salvage a truncated object, e.g. cut inside "reasoning").
_FIELD = re.compile(
    r'"(?P<key>[A-Za-z_][\w\-]{0,63})"\s*:\s*'
    r'(?P<value>"(?:[^"\\]|\\.){0,4000}"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)(?=\s*[,}\n]|\s*$)'
)


class InvalidAnswer(ValueError):
    """Raised by a game's parser for an unusable answer.

    Args:
        reason: short machine-readable reason (``illegal_action``, ``bad_move``, ...).
        value: what could still be read from the answer (e.g. a stated confidence), kept on the
            :class:`Answer` as its ``value``; None when nothing could.
    """

    def __init__(self, reason: str, value: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.value = value


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """One decision call's result.

    Attributes:
        raw: the model's text, whole (callers clip it for recording).
        value: the parser's result; for an invalid answer what the parser could still read, or None.
        invalid_reason: None when valid; else ``empty``, ``unparseable`` (no JSON object) or the parser's
            reason.
        decoding: how it was asked: ``schema``, ``json_object``, ``none`` (JSON formats) or ``text``.
        sample: the sample index of the request (part of the request-store key).
        prompt_tokens, completion_tokens, latency_s, cost_usd: accounting of the call (the original
            call's, when served from the store).
        cached_tokens: prompt tokens the provider read from its prompt cache (part of ``prompt_tokens``).
        cached: served by the request store (provenance; not for tables).
        request_key: the request's request-store key, where the client reports one (``LLMClient`` does):
            recorded in the decision's event, so the viewer can show the exact request and raw response.
    """

    raw: str
    value: T | None
    invalid_reason: str | None
    decoding: str
    sample: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    request_key: str | None = None
    cached_tokens: int = 0

    @property
    def valid(self) -> bool:
        return self.invalid_reason is None


@dataclass(frozen=True, slots=True)
class Ask:
    """What a :meth:`DecisionKit.decide` call asks for: set in :data:`CURRENT_ASK` while its request is
    completed, so a stand-in transport (``trustsim.preview``) can answer in the right shape."""

    format: str
    schema: Mapping[str, Any] | None
    name: str
    purpose: str
    parse: Callable[[Any], Any]


SAMPLE_SPAN = 2**SAMPLE_BITS
"""Sample indexes are 31-bit (trustsim.seeding); a repeat's index wraps around within them."""

CURRENT_ASK: ContextVar[Ask | None] = ContextVar("trustsim_current_ask", default=None)


@dataclass(frozen=True, slots=True)
class Decoding:
    """How a model is asked for JSON; decided once from its config (see :meth:`from_model`)."""

    mode: str = "none"  # schema | json_object | none
    strict: bool = True  # response_format json_schema "strict" (schema mode only)

    @classmethod
    def from_model(cls, model: ModelConfig) -> Decoding:
        return cls(model.structured_output, model.strict_schema)

    def response_format(self, schema: Mapping[str, Any], name: str = "answer") -> dict[str, Any] | None:
        """The ``response_format`` request parameter for a JSON answer with this schema (None: none)."""
        if self.mode == "schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": self.strict},
            }
        if self.mode == "json_object":
            return {"type": "json_object"}
        return None


# -- JSON extraction --------------------------------------------------------------------------------------
def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """JSON objects in the text, in order: the whole text, fenced blocks, then objects at each '{'.

    Bounded work on hostile input: objects start within the first :data:`MAX_PARSE_CHARS` characters, at
    most :data:`MAX_JSON_STARTS` start positions, and one object may run up to :data:`MAX_OBJECT_CHARS`
    (a well-formed answer whose reasoning is long is still read whole); deep nesting skipped. Raw control
    characters inside strings are tolerated.
    """
    head = text[:MAX_PARSE_CHARS]
    text = text[:MAX_OBJECT_CHARS]
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            obj = _DECODER.decode(stripped)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            yield obj
            return
    for chunk in _fenced(text):
        try:
            obj = _DECODER.decode(chunk)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            yield obj
    decoder = _DECODER
    start, tries = head.find("{"), 0
    while start != -1 and tries < MAX_JSON_STARTS:
        tries += 1
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = head.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        start = head.find("{", end)


def _fenced(text: str) -> Iterator[str]:
    """The contents of code fences that hold an object, in order (linear scan; at most
    :data:`MAX_JSON_STARTS` fences)."""
    pos = 0
    for _ in range(MAX_JSON_STARTS):
        m = _FENCE_OPEN.search(text, pos)
        if m is None:
            return
        end = text.find("```", m.end())
        if end == -1:
            return
        chunk = text[m.end() : end].strip()
        if chunk.startswith("{"):
            yield chunk
        pos = end + 3


def salvage_fields(text: str) -> dict[str, Any] | None:
    """The complete ``"key": scalar`` pairs of an answer that starts a JSON object but never closes it
    (a token budget that ran out inside a long string); None when the text does not start with '{' or no
    pair is complete. The first occurrence of a key wins."""
    text = text[:MAX_PARSE_CHARS].strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    if not text.startswith("{"):
        return None
    fields: dict[str, Any] = {}
    for m in _FIELD.finditer(text):
        try:
            fields.setdefault(m.group("key"), _DECODER.decode(m.group("value")))
        except ValueError:
            continue
    return fields or None


def required_keys(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Top-level keys every answer must hold: ``required``, or those shared by every ``oneOf``/``anyOf``
    variant (in the first variant's order)."""
    if not schema:
        return ()
    required = schema.get("required")
    if isinstance(required, list):
        return tuple(map(str, required))
    variants = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(variants, list):
        keyed = [required_keys(v) for v in variants if isinstance(v, dict | Mapping)]
        if keyed:
            shared = set(keyed[0]).intersection(*keyed[1:])
            return tuple(k for k in keyed[0] if k in shared)
    return ()


def extract_json(text: str, keys: Sequence[str] = ()) -> dict[str, Any] | None:
    """The answer object in a model's text.

    The first object holding every key in ``keys``; else the one holding most of them (the first on a
    tie); else the first object; else the salvaged fields of a truncated object; else None.
    """
    best: dict[str, Any] | None = None
    best_hits = -1
    for obj in json_objects(text):
        hits = sum(k in obj for k in keys)
        if hits == len(keys):
            return obj
        if hits > best_hits:
            best, best_hits = obj, hits
    if best is not None:
        return best
    return salvage_fields(text)


def stated_number(value: Any, maximum: float = 1.0) -> tuple[float | None, str | None]:
    """A stated number in [0, maximum] (a probability by default) from a JSON number or numeric string;
    ``(None, reason)`` otherwise: ``missing``, ``not_a_number`` or ``out_of_range``. Never rescaled (a
    percentage is out of range, not divided by 100)."""
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
    if not 0.0 <= value <= maximum:
        return None, "out_of_range"
    return float(value), None


# -- the kit ----------------------------------------------------------------------------------------------
def model_config(model: ModelConfig | Mapping[str, Any] | Any) -> ModelConfig:
    """The :class:`ModelConfig` of a model: itself, or a ``model`` group mapping validated into one.

    Raises:
        ConfigError: no language model is configured (e.g. ``model=scripted``) or a value is invalid.
    """
    if isinstance(model, ModelConfig):
        return model
    if not isinstance(model, Mapping) or not model.get("litellm_model"):
        raise ConfigError(
            "model", "this agent needs a language model; choose one, e.g. model=smollm2 or model=gpt-5.1"
        )
    return parse_model_config(model)


class DecisionKit:
    """Asks one model for decisions; the decoding and the sample index are fixed at construction.

    A request identical to one this kit asked before (the same seat verifying the same puzzle again) is a
    new draw, as the reference study's repeated calls were: the k-th repeat is sent with sample index
    ``sample + k`` (a distinct request-store key), so it is not served the first one's answer. The first
    time a request is asked it keeps the kit's sample index (stored answers of earlier runs still replay).

    Args:
        client: anything with ``async complete(ChatRequest) -> ChatResponse`` (the job's ``LLMClient``).
        model: the model config (``ModelConfig`` or the ``model`` group mapping); None takes
            ``client.model``.
        sample: the sample index of every request (from the seed tree: distinct per seat and session).
        request_model: the model named in requests (default ``model.name``; a litellm id sends another
            model through the same client, e.g. the arena's model-vs-model).
        params: extra generation settings for every request (e.g. ``mock_response`` in tests).

    Example:
        >>> kit = DecisionKit(client, cfg.model, sample=7)  # doctest: +SKIP
        >>> answer = await kit.decide(messages, parse_move, schema=MOVE_SCHEMA)  # doctest: +SKIP
        >>> answer.valid, answer.value, answer.raw  # doctest: +SKIP
    """

    def __init__(
        self,
        client: Any,
        model: ModelConfig | Mapping[str, Any] | None = None,
        *,
        sample: int = 0,
        request_model: str | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.model = model_config(model if model is not None else getattr(client, "model", None))
        self.decoding = Decoding.from_model(self.model)
        self.sample = int(sample)
        self.request_model = request_model or self.model.name
        self.params = dict(params or {})
        self._asked: Counter[str] = Counter()  # requests asked so far (repeats get their own sample index)

    def with_sample(self, sample: int) -> DecisionKit:
        """The same kit with another sample index (and no requests asked yet)."""
        kit = copy.copy(self)
        kit.sample = int(sample)
        kit._asked = Counter()
        return kit

    def _draw(self, req: ChatRequest) -> ChatRequest:
        """``req`` with the sample index of its draw: the kit's the first time, ``+ k`` for the k-th repeat."""
        asked = json.dumps(
            [req.model, req.messages, req.params, req.purpose, req.sample], sort_keys=True, default=str
        )
        repeat = self._asked[asked]
        self._asked[asked] += 1
        return req if repeat == 0 else dataclasses.replace(req, sample=(req.sample + repeat) % SAMPLE_SPAN)

    @property
    def reasoning_max_chars(self) -> int:
        """The model config's cap of a ``reasoning`` field in answer schemas."""
        return self.model.reasoning_max_chars

    def request(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        schema: Mapping[str, Any] | None = None,
        format: Format = "json",
        name: str = "answer",
        sample: int | None = None,
        purpose: str = "decision",
        params: Mapping[str, Any] | None = None,
        stable_chars: int = 0,
    ) -> ChatRequest:
        """The chat request :meth:`decide` sends (for inspection and tests)."""
        if format not in ("json", "text"):
            raise ValueError(f"format must be 'json' or 'text', got {format!r}")
        if format == "json" and not schema:
            raise ValueError("format='json' needs the answer's JSON schema")
        merged = {**self.params, **(params or {})}
        if format == "json":
            fmt = self.decoding.response_format(schema or {}, name)
            if fmt is not None:
                merged["response_format"] = fmt
        return ChatRequest(
            self.request_model,
            [dict(m) for m in messages],
            merged,
            sample=self.sample if sample is None else int(sample),
            purpose=purpose,
            stable_chars=stable_chars,
        )

    async def decide(
        self,
        messages: Sequence[Mapping[str, Any]],
        parse: Callable[[Any], T],
        *,
        schema: Mapping[str, Any] | None = None,
        format: Format = "json",
        name: str = "answer",
        sample: int | None = None,
        purpose: str = "decision",
        params: Mapping[str, Any] | None = None,
        stable_chars: int = 0,
    ) -> Answer[T]:
        """Ask the model and parse its answer.

        Args:
            messages: the chat messages (the prompt states the answer's shape in every mode).
            parse: the game's parser: given the extracted JSON object (``format="json"``) or the text
                (``format="text"``), returns the game's value or raises :class:`InvalidAnswer`.
            schema: the answer's JSON schema (required for ``format="json"``).
            format: ``json`` (decoded as the model config says) or ``text`` (free text).
            name: the schema's name in ``response_format``.
            sample: overrides the kit's sample index for this call.
            purpose: recorded with the request (``decision``, ``solve``, ``reflection``, ...); it also picks
                the model config's parameter group.
            params: extra generation settings for this call.
            stable_chars: the stable prefix of the request (``ChatRequest.stable_chars``): what a provider's
                prompt cache may be told to keep (``model.prompt_cache``).

        Raises:
            trustsim.llm.ProviderError: the provider failed after the client's retries.
        """
        req = self._draw(
            self.request(
                messages,
                schema=schema,
                format=format,
                name=name,
                sample=sample,
                purpose=purpose,
                params=params,
                stable_chars=stable_chars,
            )
        )
        token = CURRENT_ASK.set(Ask(format, schema, name, purpose, parse))
        try:
            resp = await self.client.complete(req)
        finally:
            CURRENT_ASK.reset(token)
        text = resp.text or ""
        value: Any = None
        reason: str | None = None
        if not text.strip():
            reason = "empty"
        else:
            data: Any = text if format == "text" else extract_json(text, required_keys(schema))
            if data is None:
                reason = "unparseable"
            else:
                try:
                    value = parse(data)
                except InvalidAnswer as bad:
                    value, reason = bad.value, bad.reason
        decoding = "text" if format == "text" else self.decoding.mode
        return Answer(
            raw=text,
            value=value,
            invalid_reason=reason,
            decoding=decoding,
            sample=req.sample,
            prompt_tokens=resp.prompt_tokens,
            completion_tokens=resp.completion_tokens,
            latency_s=resp.latency_s,
            cost_usd=resp.cost_usd,
            cached=resp.cached,
            request_key=getattr(resp, "key", None),
            cached_tokens=resp.cached_tokens,
        )


__all__ = [
    "CURRENT_ASK",
    "Answer",
    "Ask",
    "DecisionKit",
    "Decoding",
    "InvalidAnswer",
    "extract_json",
    "json_objects",
    "model_config",
    "required_keys",
    "salvage_fields",
    "stated_number",
]
