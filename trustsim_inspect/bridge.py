"""The Inspect transport: a trustsim job's model calls sent through Inspect's ``get_model()``, and its events
shown in the sample's transcript.

A sample's job runs on a worker thread with an event loop of its own (trustsim's runners are synchronous at
the top); Inspect's model, its limits, its cache and the sample's transcript live on Inspect's loop. The
:class:`InspectBridge`, made inside the sample, hands each call over to Inspect's loop in the sample's context
(so the call is the sample's: its transcript, its model roles, its limits) and waits for the answer on the
job's loop. Each event the job records is added to the transcript as an ``info`` event (source ``trustsim``),
in the job's order.

A seat's model is named by its trustsim model id: :data:`MAIN` for the eval's model (``--model``),
``inspect/<role>`` for a model role (``--model-role <role>=...``; the roles a game reads are listed in
:data:`trustsim_inspect.samples.ROLES`, none of them named ``model``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import time
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.util import JSONSchema

from analysis.inspect_logs import EVENT_SOURCE
from trustsim.errors import ConfigError
from trustsim.llm.errors import ProviderError
from trustsim.llm.transport import CallResult, EmptyResponseError, sanitize_text

T = TypeVar("T")

MAIN = "inspect/model"
"""The trustsim model id of the eval's own model (``--model``)."""
ROLE_PREFIX = "inspect/"
STOPPED = "the Inspect sample stopped (a time limit or an interrupt)"
RESUME = "inspect eval-retry <log> runs the sample again (with --cache, Inspect replays the answers it has)"
SAMPLE_KEY = "trustsim_sample"
"""Message metadata key holding trustsim's sample index: part of Inspect's cache key (its cache then keeps
apart what trustsim's request store keeps apart), never sent to the provider."""

# trustsim's generation params -> GenerateConfig fields of the same meaning
SAME_NAME = (
    "temperature", "top_p", "top_k", "max_tokens", "seed", "frequency_penalty", "presence_penalty",
    "logit_bias", "reasoning_effort", "extra_headers", "extra_body", "best_of",
)  # fmt: skip
RENAMED = {"stop": "stop_seqs", "max_completion_tokens": "max_tokens", "n": "num_choices"}


def model_id(role: str | None) -> str:
    """The trustsim model id that sends a seat's calls to ``role`` (None: the eval's model)."""
    return MAIN if role is None else ROLE_PREFIX + role


def role_of(model: str) -> str | None:
    """The Inspect model role a trustsim model id names (None: the eval's model)."""
    if model == MAIN:
        return None
    if model.startswith(ROLE_PREFIX):
        return model[len(ROLE_PREFIX) :]
    raise ConfigError(
        "model.litellm_model", f"{model!r} is no Inspect model (expected {MAIN!r} or inspect/<role>)"
    )


def generate_config(params: Mapping[str, Any], key: str = "model.params") -> GenerateConfig:
    """trustsim's generation params as Inspect's :class:`GenerateConfig`; a param Inspect has no field for
    fails naming ``key.<param>``.

    ``response_format`` maps to ``response_schema`` (JSON schema) or, for JSON mode (``json_object``, which
    Inspect has no field for), to the request body's ``response_format`` (OpenAI-compatible providers).
    """
    fields: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        if name in SAME_NAME:
            fields[name] = value
        elif name in RENAMED:
            fields[RENAMED[name]] = [value] if name == "stop" and isinstance(value, str) else value
        elif name == "response_format":
            fields.update(_response_format(value, f"{key}.response_format"))
        else:
            raise ConfigError(
                f"{key}.{name}",
                "the Inspect transport has no setting for this param (set it with Inspect's own options, "
                "e.g. -M or --generate-config, or choose a model_preset without it)",
            )
    if "extra_body" in fields and "_json_mode" in fields:
        fields["extra_body"] = {**fields["extra_body"], "response_format": {"type": "json_object"}}
    elif "_json_mode" in fields:
        fields["extra_body"] = {"response_format": {"type": "json_object"}}
    fields.pop("_json_mode", None)
    return GenerateConfig(**fields)


def _response_format(value: Any, key: str) -> dict[str, Any]:
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "json_schema":
        spec = value.get("json_schema") or {}
        return {
            "response_schema": ResponseSchema(
                name=str(spec.get("name") or "answer"),
                json_schema=JSONSchema.model_validate(spec.get("schema") or {}),
                strict=spec.get("strict"),
            )
        }
    if kind == "json_object":
        return {"_json_mode": True}
    if kind == "text":
        return {}
    raise ConfigError(key, f"expected a json_schema, json_object or text response_format, got {value!r}")


def chat_messages(messages: list[dict[str, Any]], sample: int) -> list[ChatMessage]:
    """OpenAI-style messages as Inspect's; the last one carries trustsim's sample index in its metadata."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    out: list[ChatMessage] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in kinds:
            raise ValueError(f"message {i}: role {role!r} cannot be sent through Inspect")
        metadata = {SAMPLE_KEY: sample} if i == len(messages) - 1 else None
        out.append(kinds[role](content=message.get("content") or "", metadata=metadata))
    return out


def cause_of(exc: BaseException) -> str:
    """A one-line cause for the job's manifest: the last attempt's error when Inspect gave up retrying."""
    last = getattr(exc, "last_attempt", None)  # tenacity's RetryError: Inspect's retries ran out
    inner = last.exception() if last is not None and last.failed else None
    shown = inner if inner is not None else exc
    text = " ".join(str(shown).split())[:300]
    return f"{type(shown).__name__}: {text}" + (" (Inspect's retries ran out)" if inner is not None else "")


def answer(output: ModelOutput) -> str:
    """The answer's text; an answer without a choice is a provider fault (trustsim's rule: retried, never a
    move), an empty one cut by length or a filter is the model's behaviour."""
    if not output.choices:
        raise EmptyResponseError(f"Inspect model output with no choice ({output.error or 'no error given'})")
    return sanitize_text(output.completion)


class InspectBridge:
    """Inspect's side of one sample's job: make it inside the sample (on Inspect's loop), give
    :meth:`transport` and :meth:`on_event` to the job's host (:class:`trustsim.host.Host`).

    Attributes:
        failure: the first exception Inspect raised for a call of the job (a limit, a provider error after
            Inspect's retries); the job fails on it, and the solver raises it again to Inspect.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()
        self._closed = False
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        self.failure: BaseException | None = None

    def close(self) -> None:
        """Stop the job's calls (the sample was cancelled: a time limit, an interrupt): the calls in flight are
        cancelled on Inspect's loop and every call, those included, fails with a provider error, so the job
        ends with a ``failed`` manifest."""
        self._closed = True
        for future in list(self._in_flight):
            future.cancel()

    # -- calls -------------------------------------------------------------------------------------
    async def transport(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        *,
        sample: int = 0,
        **_: Any,  # api_base, api_key, timeout_s, drop_params, price: Inspect's provider and options own them
    ) -> CallResult:
        """One call of the job (trustsim's transport signature), answered by Inspect's model."""
        if self._closed:
            raise ProviderError(STOPPED, model=model, resume=RESUME)
        try:
            return await self._on_inspect(self._generate(model, messages, params, sample))
        except asyncio.CancelledError:
            if self._closed:  # cancelled by close(), not by the job
                raise ProviderError(STOPPED, model=model, resume=RESUME) from None
            raise

    async def _generate(
        self, model: str, messages: list[dict[str, Any]], params: dict[str, Any], sample: int
    ) -> CallResult:
        role = role_of(model)
        config = generate_config(params)
        start = time.perf_counter()
        try:
            target = get_model() if role is None else get_model(role=role)
            output = await target.generate(chat_messages(messages, sample), config=config)
        except Exception as exc:  # Inspect retried what it retries: the job stops, the sample gets exc
            if self.failure is None:
                self.failure = exc
            raise ProviderError(cause_of(exc), model=model, resume=RESUME) from None
        usage = output.usage
        return CallResult(
            answer(output),
            int(usage.input_tokens) if usage else 0,
            int(usage.output_tokens) if usage else 0,
            float(usage.total_cost or 0.0) if usage else 0.0,
            float(output.time) if output.time is not None else time.perf_counter() - start,
        )

    async def _on_inspect(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on Inspect's loop in (a copy of) the sample's context; wait for it on this loop."""
        future = self._context.copy().run(asyncio.run_coroutine_threadsafe, coro, self._loop)
        self._in_flight.add(future)
        try:
            return await asyncio.wrap_future(future)
        finally:
            self._in_flight.discard(future)

    # -- events ------------------------------------------------------------------------------------
    def on_event(self, line: str) -> None:
        """Add one event of the job (a JSON line of ``events.jsonl``) to the sample's transcript."""
        self._loop.call_soon_threadsafe(_info, json.loads(line), context=self._context.copy())


def _info(data: Any) -> None:
    transcript().info(data, source=EVENT_SOURCE)
