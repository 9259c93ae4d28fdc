"""The escape-room LLM agent: prompt → model → parsed action, with memory across games."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np

from agents.escape_room.base import EscapeRoomPolicy, Services
from agents.escape_room.llm_memory import MEMORY_MODES, Memory, ReflectionMemory, make_memory
from agents.escape_room.llm_parse import parse_decision, parse_integer
from agents.escape_room.llm_prompt import (
    SOLVE_SCHEMA,
    decision_messages,
    decision_schema,
    reflection_messages,
    response_format,
    rules_text,
    solve_messages,
)
from games.escape_room.types import Decision, GameSummary, Observation, Puzzle, RoundReport
from trustsim.errors import ConfigError
from trustsim.llm import ChatRequest, ModelConfig, parse_model_config

RAW_MAX_CHARS = 20_000  # longer model answers are recorded cut to this length (with a marker)


def _clip(text: str, limit: int = RAW_MAX_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"…[cut {len(text) - limit} chars]"


class LLMAgent(EscapeRoomPolicy):
    """A language-model player. Uses ``services.llm`` (the job's client) and ``services.model``.

    Args:
        memory: none | transcript | reflection | ledger (what crosses games).
        transcript_max_events: newest events kept by transcript memory.
        transcript_max_chars: character cap of transcript memory.
        reflection_max_words: word cap of a reflection.
        ledger_max_games: past games kept by ledger memory.
        transcript_trim: exact (the reference: newest events that fit), block (drop old events in blocks,
            keeping the prompt prefix stable for KV reuse), or auto (block for local models, else exact).
    """

    name: ClassVar[str] = "llm"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": True, "uses_llm": True, "memory": "configurable"}
    is_async: ClassVar[bool] = True

    def __init__(
        self,
        memory: str = "transcript",
        transcript_max_events: int = 100,
        transcript_max_chars: int = 12_000,
        reflection_max_words: int = 300,
        ledger_max_games: int = 20,
        transcript_trim: str = "auto",
    ) -> None:
        if memory not in MEMORY_MODES:
            raise ValueError(f"memory must be one of {', '.join(MEMORY_MODES)}, got {memory!r}")
        for key, value in (
            ("transcript_max_events", transcript_max_events),
            ("transcript_max_chars", transcript_max_chars),
            ("reflection_max_words", reflection_max_words),
            ("ledger_max_games", ledger_max_games),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{key} must be a positive integer, got {value!r}")
        if transcript_trim not in ("auto", "exact", "block"):
            raise ValueError(f"transcript_trim must be auto, exact or block, got {transcript_trim!r}")
        super().__init__(memory=memory)
        self.transcript_trim = transcript_trim
        self._limits: dict[str, Any] = {
            "max_events": transcript_max_events,
            "max_chars": transcript_max_chars,
            "max_words": reflection_max_words,
            "max_games": ledger_max_games,
            "trim": "exact" if transcript_trim == "auto" else transcript_trim,
        }
        self.mem: Memory = make_memory(memory, **self._limits)
        self._model: ModelConfig | None = None
        self._rules = ""
        self._sample = 0
        self.reflections: list[str] = []  # raw reflection answers, newest last (for inspection)

    @property
    def model_name(self) -> str:
        if self._model is not None:
            return self._model.name
        model = self.services.model
        return str(model.get("name")) if isinstance(model, dict) and model.get("name") else "unknown"

    # -- lifecycle ------------------------------------------------------------------------------------
    def start_session(self, seat: str, rng: np.random.Generator, services: Services) -> None:
        model = services.model
        if not isinstance(model, dict) or not model.get("litellm_model"):
            raise ConfigError("model", "the llm agent needs a language model; choose one, e.g. model=smollm2")
        if services.llm is None:
            raise ConfigError("model", "no LLM client was built for the llm agent")
        self._model = parse_model_config(model)
        if self.transcript_trim == "auto":
            self._limits["trim"] = "block" if self._model.provider == "local" else "exact"
        super().start_session(seat, rng, services)
        game = services.game or {}
        self._rules = rules_text(int(game.get("coins", 4)), game.get("max_rounds"))
        # The sample index keeps replicate sessions' requests distinct in the store, reproducibly.
        self._sample = int(rng.integers(0, 2**31 - 1))

    def forget(self) -> None:
        self.mem = make_memory(self.memory, **self._limits)

    def start_game(self, obs: Observation) -> None:
        self.mem.start_game(obs)

    def observe(self, report: RoundReport) -> None:
        self.mem.record_round(report)

    async def aend_game(self, summary: GameSummary) -> None:
        self.mem.end_game(summary)
        if isinstance(self.mem, ReflectionMemory):
            await self._reflect()

    # -- model calls ----------------------------------------------------------------------------------
    def _params(self, schema: dict[str, Any]) -> dict[str, Any]:
        assert self._model is not None
        fmt = response_format(schema, self._model.structured_output)
        return {"response_format": fmt} if fmt else {}

    async def _complete(self, messages: list[dict[str, str]], params: dict[str, Any], purpose: str) -> Any:
        assert self._model is not None, "start_session was not called"
        req = ChatRequest(self._model.name, messages, params, sample=self._sample, purpose=purpose)
        return await self.services.llm.complete(req)

    async def adecide(self, obs: Observation) -> Decision:
        assert self._model is not None, "start_session was not called"
        messages = decision_messages(self._rules, obs, self.mem.context())
        params = self._params(decision_schema(obs, self._model.reasoning_max_chars))
        resp = await self._complete(messages, params, "decision")
        parsed = parse_decision(resp.text)
        decision = Decision(
            action=parsed.action,
            raw_text=_clip(resp.text),
            reasoning=_clip(parsed.reasoning, 4_000) if parsed.reasoning else None,
            confidence=parsed.confidence if parsed.confidence is not None else {},
            trusted=parsed.trusted,
            parse_error=parsed.error,
            latency_s=resp.latency_s,
            prompt_tokens=resp.prompt_tokens,
            completion_tokens=resp.completion_tokens,
            cached=resp.cached,
        )
        self.mem.record_decision(obs, decision)
        return decision

    def decide(self, obs: Observation) -> Decision:
        raise RuntimeError("the llm agent is async: the game calls adecide")

    async def asolve(self, puzzle: Puzzle) -> int | None:
        """Solve a puzzle in a separate stateless call with the model's short sub-task budget."""
        resp = await self._complete(solve_messages(puzzle), self._params(SOLVE_SCHEMA), "solve")
        return parse_integer(resp.text)

    async def _reflect(self) -> None:
        assert isinstance(self.mem, ReflectionMemory) and self._model is not None
        messages = reflection_messages(
            self._rules, self.mem.reflection, self.mem.game_log(), self.mem.max_words
        )
        # Free text (no answer schema): the model config's reflection_params bound its length; the memory
        # keeps the first max_words words. A JSON {"reflection": ...} answer is unwrapped.
        resp = await self._complete(messages, {}, "reflection")
        text = resp.text
        try:
            obj = json.loads(text, strict=False)
            if isinstance(obj, dict) and isinstance(obj.get("reflection"), str):
                text = obj["reflection"]
        except (ValueError, RecursionError):
            pass
        self.reflections.append(_clip(text))
        self.mem.set_reflection(text)
