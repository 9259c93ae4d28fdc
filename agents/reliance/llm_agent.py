"""The LLM agent: one conversation per scenario; answers JSON ``{"action", "confidence", "reasoning"}``.

It asks through the decision kit (``trustsim.llm.decision``): how the answer is decoded (JSON schema,
JSON mode or unconstrained) is the model config's ``structured_output`` / ``strict_schema``, the same
in every game.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agents.reliance.base import Choice, DecisionView, ReliancePolicy
from agents.reliance.parse import Parsed, answer_schema, read_answer
from trustsim.errors import ParameterError
from trustsim.llm.config import ModelConfig
from trustsim.llm.decision import DecisionKit

SYSTEM_PROMPT = (
    "You make reliance decisions in a short multi-stage task. Each stage you choose exactly one of the "
    "listed options. Your goal is the lowest expected total cost over all stages, using the stated "
    "probabilities and everything you have observed so far. Answer with a JSON object only: "
    '{"action": "<one option name exactly as listed>", "confidence": <probability from 0 to 1 that what '
    "your action relies on succeeds at this stage (at a stage without a job: that your choice is the best "
    'one)>, "reasoning": "<one or two sentences>"}.'
)


class LLMAgent(ReliancePolicy):
    """Asks the job's LLM client; the conversation grows with the visible history of the scenario.

    Args:
        reasoning_max_chars: Cap of the reasoning field in the schema; ``None`` takes the model config's
            ``reasoning_max_chars``.
        params: Extra generation parameters for every decision request (e.g. ``mock_response`` in tests).
        **unused: Keys of the shared ``conf/agent/llm.yaml`` that other games use; ignored here.
    """

    name: ClassVar[str] = "llm"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": True, "uses_reference": False, "stochastic": True}
    is_async: ClassVar[bool] = True

    def __init__(
        self, reasoning_max_chars: int | None = None, params: dict[str, Any] | None = None, **unused: Any
    ) -> None:
        super().__init__()
        if reasoning_max_chars is not None and reasoning_max_chars < 1:
            raise ParameterError("reasoning_max_chars", f"must be >= 1, got {reasoning_max_chars}")
        self.reasoning_max_chars = reasoning_max_chars
        self.params = dict(params or {})
        self.unused = unused
        self.messages: list[dict[str, str]] = []
        self.kit: DecisionKit | None = None
        self._kit_for: tuple[int, int] | None = None

    @property
    def model_name(self) -> str:
        if self.kit is not None:
            return self.kit.model.name
        model = getattr(self.services, "model", None)
        if isinstance(model, ModelConfig):
            return model.name
        return str((model or {}).get("name", "unknown"))

    @property
    def sample(self) -> int:
        """The sample index of this conversation's requests."""
        return self.kit.sample if self.kit is not None else 0

    def start_item(self, rng: Any, services: Any = None) -> None:
        super().start_item(rng, services)
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        sample = int(getattr(services, "sample", 0) or 0)
        llm = getattr(services, "llm", None)
        if llm is None:
            self.kit = self._kit_for = None
            return
        # One kit per (client, model config): the model config is validated once, not per scenario.
        key = (id(llm), id(getattr(services, "model", None)))
        if self.kit is None or self._kit_for != key:
            self.kit = DecisionKit(llm, getattr(services, "model", None), params=self.params)
            self._kit_for = key
        self.kit = self.kit.with_sample(sample)

    def decide(self, view: DecisionView) -> Choice:  # pragma: no cover - the engine awaits adecide
        raise RuntimeError("the LLM agent is asynchronous; call adecide")

    async def adecide(self, view: DecisionView) -> Choice:
        if self.kit is None:
            raise RuntimeError("the LLM agent needs the job's LLM client (start_item with services.llm)")
        self.messages.append({"role": "user", "content": view.prompt})
        cap = self.reasoning_max_chars or self.kit.reasoning_max_chars
        answer = await self.kit.decide(
            self.messages,
            lambda obj: read_answer(obj, view.actions),
            schema=answer_schema(view.actions, cap),
            name="reliance_decision",
        )
        self.messages.append({"role": "assistant", "content": answer.raw})
        parsed = answer.value if isinstance(answer.value, Parsed) else Parsed(None, None, "")
        return Choice(
            parsed.action if answer.valid else None,
            parsed.confidence,
            parsed.reasoning,
            raw=answer.raw,
            invalid_reason=answer.invalid_reason or "",
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached=answer.cached,
            request_key=answer.request_key,
        )
