"""The LLM agent: one conversation per scenario; answers JSON ``{"action", "confidence", "reasoning"}``."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.reliance.base import Choice, DecisionView, ReliancePolicy
from agents.reliance.parse import parse_answer

SYSTEM_PROMPT = (
    "You make reliance decisions in a short multi-stage task. Each stage you choose exactly one of the "
    "listed options. Your goal is the lowest expected total cost over all stages, using the stated "
    "probabilities and everything you have observed so far. Answer with a JSON object only: "
    '{"action": "<one option name exactly as listed>", "confidence": <probability from 0 to 1 that what '
    "your action relies on succeeds at this stage (at a stage without a job: that your choice is the best "
    'one)>, "reasoning": "<one or two sentences>"}.'
)


def response_format(actions: tuple[str, ...], mode: str, max_chars: int) -> dict[str, Any] | None:
    """The ``response_format`` request parameter for the model's structured-output mode."""
    if mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "reliance_decision",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": list(actions)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "reasoning": {"type": "string", "maxLength": max_chars},
                },
                "required": ["action", "confidence", "reasoning"],
                "additionalProperties": False,
            },
        },
    }


class LLMAgent(ReliancePolicy):
    """Asks the job's LLM client; the conversation grows with the visible history of the scenario.

    Args:
        structured_output: ``schema`` (JSON-schema response_format), ``json_object`` or ``none``;
            ``None`` takes ``cfg.model.structured_output`` (default ``schema``).
        reasoning_max_chars: Cap of the reasoning field in the schema; ``None`` takes
            ``cfg.model.reasoning_max_chars`` (default 400).
        params: Extra generation parameters for every decision request (e.g. ``mock_response`` in tests).
        **unused: Keys of the shared ``conf/agent/llm.yaml`` that other games use; ignored here.
    """

    name: ClassVar[str] = "llm"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": True, "uses_reference": False, "stochastic": True}
    is_async: ClassVar[bool] = True

    def __init__(
        self,
        structured_output: str | None = None,
        reasoning_max_chars: int | None = None,
        params: dict[str, Any] | None = None,
        **unused: Any,
    ) -> None:
        super().__init__()
        if structured_output not in (None, "schema", "json_object", "none"):
            raise ValueError(
                f"structured_output must be schema, json_object or none, not {structured_output!r}"
            )
        self.structured_output = structured_output
        self.reasoning_max_chars = reasoning_max_chars
        self.params = dict(params or {})
        self.unused = unused
        self.messages: list[dict[str, str]] = []
        self.sample = 0

    @property
    def model_name(self) -> str:
        model = getattr(self.services, "model", None) or {}
        return str(model.get("name", "unknown"))

    def start_item(self, rng: Any, services: Any = None) -> None:
        super().start_item(rng, services)
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        self.sample = int(getattr(services, "sample", 0) or 0)

    def decide(self, view: DecisionView) -> Choice:  # pragma: no cover - the engine awaits adecide
        raise RuntimeError("the LLM agent is asynchronous; call adecide")

    async def adecide(self, view: DecisionView) -> Choice:
        from trustsim.llm import ChatRequest

        llm = getattr(self.services, "llm", None)
        if llm is None:
            raise RuntimeError("the LLM agent needs the job's LLM client (services.llm)")
        model = getattr(self.services, "model", None) or {}
        mode = self.structured_output or str(model.get("structured_output", "schema") or "schema")
        self.messages.append({"role": "user", "content": view.prompt})
        params = dict(self.params)
        cap = self.reasoning_max_chars or int(model.get("reasoning_max_chars", 400) or 400)
        fmt = response_format(view.actions, mode, cap)
        if fmt is not None:
            params["response_format"] = fmt
        req = ChatRequest(
            model=self.model_name, messages=list(self.messages), params=params, sample=self.sample
        )
        resp = await llm.complete(req)
        text = resp.text or ""
        self.messages.append({"role": "assistant", "content": text})
        parsed = parse_answer(text, view.actions)
        return Choice(
            parsed.action,
            parsed.confidence,
            parsed.reasoning,
            raw=text,
            invalid_reason=parsed.invalid_reason,
            latency_s=resp.latency_s,
            prompt_tokens=resp.prompt_tokens,
            completion_tokens=resp.completion_tokens,
            cached=resp.cached,
        )
