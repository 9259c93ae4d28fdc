"""The LLM arena player: one stateless chat call per round (the prompt carries the history).

It asks through the decision kit (``trustsim.llm.decision``): how the answer is decoded (JSON schema,
JSON mode or unconstrained) is the model config's ``structured_output`` / ``strict_schema``, the same
in every game.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agents.arena.base import ArenaPlayer
from agents.arena.parse import ANSWER_SCHEMA, ParsedAnswer, read_answer, unusable
from agents.arena.prompt import messages
from games.arena.types import Decision, View
from trustsim.errors import ParameterError
from trustsim.llm.decision import DecisionKit


class LLMPlayer(ArenaPlayer):
    """Asks a language model for ``move``, ``p_opponent_cooperates`` and ``reasoning`` each round.

    An invalid move is recorded (``valid=False`` with the reason and raw text) and resolved by the game's
    invalid-move rule; an invalid or missing probability is recorded as missing. Provider errors are not
    caught here: the LLM layer retries them and a persistent failure stops the run (resumable).

    Args:
        model: model sent in the request (None: the job's configured model; a litellm id plays another
            model through the job's client, with the job's model settings).
        history_window: rounds listed verbatim in the prompt (older ones are summarised).
    """

    name = "llm"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": True,
        "memory_depth": float("inf"),
        "uses_llm": True,
        "states_confidence": True,
    }
    is_async = True

    def __init__(self, model: str | None = None, history_window: int = 20) -> None:
        super().__init__()
        if history_window < 1:
            raise ParameterError("history_window", f"must be >= 1, got {history_window}")
        self.model = model
        self.history_window = history_window
        self.kit: DecisionKit | None = None

    def bind(
        self, client: Any, model: str | None = None, sample: int = 0, *, model_config: Any = None
    ) -> None:
        """Attach the LLM client and the sample index of this seat's requests.

        Args:
            client: the job's client (``await client.complete(ChatRequest)``).
            model: the job's model name (used when the player names no model of its own).
            sample: the sample index (from the seed tree; part of the request-store key).
            model_config: the model config deciding the decoding; None takes ``client.model``.
        """
        self.kit = DecisionKit(client, model_config, sample=sample)
        self.model = self.model or model or self.kit.model.name
        self.kit.request_model = self.model

    @property
    def sample(self) -> int:
        return self.kit.sample if self.kit is not None else 0

    @property
    def model_name(self) -> str:
        return self.model or "unknown"

    @property
    def label(self) -> str:
        return self.model_name

    def decide(self, view: View) -> Decision:
        raise RuntimeError("the LLM player is asynchronous; use adecide")

    async def adecide(self, view: View) -> Decision:
        if self.kit is None:
            raise RuntimeError("LLM player used before bind(client, model)")
        answer = await self.kit.decide(
            messages(view, self.history_window), read_answer, schema=ANSWER_SCHEMA, name="arena_move"
        )
        parsed = (
            answer.value if isinstance(answer.value, ParsedAnswer) else unusable(answer.invalid_reason or "")
        )
        return Decision(
            move=parsed.move if answer.valid else None,
            p_cooperate=parsed.p,
            reasoning=parsed.reasoning,
            raw=answer.raw,
            valid=answer.valid,
            invalid_reason=answer.invalid_reason,
            p_invalid_reason=parsed.p_error,
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached=answer.cached,
            request_key=answer.request_key,
        )
