"""The LLM arena player: one stateless chat call per round (the prompt carries the history)."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.arena.base import ArenaPlayer
from agents.arena.parse import ANSWER_SCHEMA, parse_answer
from agents.arena.prompt import messages
from games.arena.types import Decision, View


class LLMPlayer(ArenaPlayer):
    """Asks a language model for ``move``, ``p_opponent_cooperates`` and ``reasoning`` each round.

    An invalid move is recorded (``valid=False`` with the reason and raw text) and resolved by the game's
    invalid-move rule; an invalid or missing probability is recorded as missing. Provider errors are not
    caught here: the LLM layer retries them and a persistent failure stops the run (resumable).

    Args:
        model: model name sent in the request (None: the job's configured model).
        history_window: rounds listed verbatim in the prompt (older ones are summarised).
        structured_output: ``schema`` (JSON-schema response_format), ``json_object`` or ``none``;
            None follows the model config's ``structured_output`` and falls back to ``schema``.
    """

    name = "llm"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": True,
        "memory_depth": float("inf"),
        "uses_llm": True,
        "states_confidence": True,
    }
    is_async = True

    def __init__(
        self, model: str | None = None, history_window: int = 20, structured_output: str | None = None
    ) -> None:
        super().__init__()
        if history_window < 1:
            raise ValueError(f"llm player: history_window must be >= 1, got {history_window}")
        if structured_output not in (None, "schema", "json_object", "none"):
            raise ValueError(
                f"llm player: structured_output must be schema, json_object or none, got {structured_output!r}"
            )
        self.model = model
        self.history_window = history_window
        self.structured_output = structured_output
        self.client: Any = None
        self.sample = 0

    def bind(self, client: Any, model: str, sample: int = 0, structured_output: str | None = None) -> None:
        """Attach the LLM client (``await client.complete(ChatRequest)``), the model and the replicate index."""
        self.client = client
        self.model = self.model or model
        self.sample = sample
        if self.structured_output is None:  # follow the model config when it says, else JSON schema
            known = ("schema", "json_object", "none")
            self.structured_output = structured_output if structured_output in known else "schema"

    @property
    def model_name(self) -> str:
        return self.model or "unknown"

    @property
    def label(self) -> str:
        return self.model_name

    def params(self) -> dict[str, Any]:
        """Generation params of a decision request."""
        if self.structured_output == "schema":
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": "arena_move", "schema": ANSWER_SCHEMA, "strict": True},
            }
            return {"response_format": fmt}
        if self.structured_output == "json_object":
            return {"response_format": {"type": "json_object"}}
        return {}

    def decide(self, view: View) -> Decision:
        raise RuntimeError("the LLM player is asynchronous; use adecide")

    async def adecide(self, view: View) -> Decision:
        if self.client is None or not self.model:
            raise RuntimeError("LLM player used before bind(client, model)")
        from trustsim.llm.types import ChatRequest

        req = ChatRequest(
            model=self.model,
            messages=messages(view, self.history_window),
            params=self.params(),
            sample=self.sample,
        )
        resp = await self.client.complete(req)
        parsed = parse_answer(resp.text)
        return Decision(
            move=parsed.move,
            p_cooperate=parsed.p,
            reasoning=parsed.reasoning,
            raw=resp.text,
            valid=parsed.move is not None,
            invalid_reason=parsed.move_error,
            p_invalid_reason=parsed.p_error,
            latency_s=resp.latency_s,
            prompt_tokens=resp.prompt_tokens,
            completion_tokens=resp.completion_tokens,
            cached=resp.cached,
        )
