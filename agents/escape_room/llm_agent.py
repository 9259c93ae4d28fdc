"""The escape-room LLM agent: prompt → model → parsed action, with memory across games.

Two prompt styles (``agent.prompt``; docs/prompts.md shows both for one state):

- ``reference``: the study's request, exactly (cyjabc2020/Escape-room-v2 @ 74f0fd1): one user message, the
  rules block and every raw event in a transcript recomputed every round, ``DECISION:`` / ``REASONING:``
  answers parsed as the study parsed them, the study's own-answer, verifier and reflection prompts.
- ``trustsim``: a shared rules message plus a state message, a JSON answer with per-puzzle confidence
  (decoded as the model config says: JSON schema, JSON mode or plain).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

import numpy as np

from agents.escape_room import reference_prompt as rp
from agents.escape_room.base import EscapeRoomPolicy, Services
from agents.escape_room.llm_memory import MEMORY_MODES, Memory, make_memory
from agents.escape_room.llm_parse import parse_decision, parse_integer
from agents.escape_room.llm_prompt import (
    SOLVE_SCHEMA,
    announcement_text,
    decision_request,
    decision_schema,
    reflection_messages,
    rules_text,
    solve_messages,
)
from agents.escape_room.reference_announce import end_of_game, grown_labels, round_announcement
from agents.escape_room.reference_memory import ReferenceMemory
from agents.escape_room.reference_parse import decision_action, extract_decision, solve_answer
from games.escape_room.options import PROMPT_STYLES
from games.escape_room.types import (
    SEATS,
    Decision,
    GameSummary,
    ModelCall,
    Observation,
    Puzzle,
    RoundReport,
    Solution,
)
from trustsim.errors import ConfigError, ParameterError
from trustsim.llm import ModelConfig
from trustsim.llm.decision import Answer, DecisionKit, model_config

RAW_MAX_CHARS = 20_000  # longer model answers are recorded cut to this length (with a marker)
_REASONING = re.compile(r"^\s*REASONING:\s*(.*)", re.IGNORECASE | re.DOTALL | re.MULTILINE)


def _clip(text: str, limit: int = RAW_MAX_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"…[cut {len(text) - limit} chars]"


def _call(answer: Answer[Any]) -> ModelCall:
    """A solve's or reflection's answer as the game records it (the raw text clipped, the request key)."""
    return ModelCall(
        raw_text=_clip(answer.raw),
        request_key=answer.request_key,
        latency_s=answer.latency_s,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        cached_tokens=answer.cached_tokens,
        cached=answer.cached,
    )


class LLMAgent(EscapeRoomPolicy):
    """A language-model player. Uses ``services.llm`` (the job's client) and ``services.model``.

    Args:
        memory: none | transcript | reflection | transcript_reflection | ledger (what crosses games).
        prompt: reference (the study's prompts and parsing, exactly) | trustsim (JSON with confidence). A
            model config may pin a style (``model.prompt``; the embedded model uses ``trustsim``).
        transcript_max_events: newest events kept by transcript memory.
        transcript_max_chars: character cap of transcript memory.
        reflection_max_words: word cap of a reflection (trustsim style; the reference asks for 300 words
            and keeps the whole answer).
        ledger_max_games: past games kept by ledger memory (trustsim style only).
        transcript_trim: exact (the reference: newest events that fit), block (drop old events in blocks,
            keeping the prompt prefix stable for KV reuse), or auto (block for local models, else exact).
            The reference style always trims exactly, every round.
    """

    name: ClassVar[str] = "llm"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": True, "uses_llm": True, "memory": "configurable"}
    is_async: ClassVar[bool] = True

    def __init__(
        self,
        memory: str = "transcript",
        prompt: str = "trustsim",
        transcript_max_events: int = 100,
        transcript_max_chars: int = 12_000,
        reflection_max_words: int = 300,
        ledger_max_games: int = 20,
        transcript_trim: str = "auto",
    ) -> None:
        if memory not in MEMORY_MODES:
            raise ValueError(f"memory must be one of {', '.join(MEMORY_MODES)}, got {memory!r}")
        if prompt not in PROMPT_STYLES:
            raise ParameterError("prompt", f"must be one of {', '.join(PROMPT_STYLES)}, got {prompt!r}")
        for key, value in (
            ("transcript_max_events", transcript_max_events),
            ("transcript_max_chars", transcript_max_chars),
            ("reflection_max_words", reflection_max_words),
            ("ledger_max_games", ledger_max_games),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParameterError(key, f"must be a positive integer, got {value!r}")
        if transcript_trim not in ("auto", "exact", "block"):
            raise ParameterError("transcript_trim", f"must be auto, exact or block, got {transcript_trim!r}")
        super().__init__(memory=memory)
        self.prompt = prompt
        self.transcript_trim = transcript_trim
        self._limits: dict[str, Any] = {
            "max_events": transcript_max_events,
            "max_chars": transcript_max_chars,
            "max_words": reflection_max_words,
            "max_games": ledger_max_games,
            "trim": "exact" if transcript_trim == "auto" else transcript_trim,
        }
        self.mem: Memory = make_memory(memory, **self._limits)
        self.ref = self._reference_memory()
        self._model: ModelConfig | None = None
        self._kit: DecisionKit | None = None
        self._rules = ""
        self._compact = False  # model.prompt_compact: compact trustsim prompts (start_session)
        self._announce_passes = False
        self._num_questions = len(SEATS)
        self._last_obs: Observation | None = None
        self._announcements: list[str] = []  # this game's announcements (trustsim style)
        self.reflections: list[str] = []  # raw reflection answers, newest last (for inspection)

    @property
    def model_name(self) -> str:
        if self._model is not None:
            return self._model.name
        model = self.services.model
        if isinstance(model, ModelConfig):
            return model.name
        return str(model.get("name")) if isinstance(model, dict) and model.get("name") else "unknown"

    @property
    def reference(self) -> bool:
        return self.prompt == "reference"

    def _reference_memory(self) -> ReferenceMemory:
        """The study's memory for a trustsim memory mode (context, reflection): transcript → (``max_allowed``,
        none), none → (``current_game_only``, none), reflection → (``current_game_only``, ``evolving``),
        transcript_reflection → (``max_allowed``, ``evolving``), the study's default."""
        persistent = self.memory in ("transcript", "transcript_reflection")
        return ReferenceMemory(
            "max_allowed" if persistent else "current_game_only",
            self._limits["max_events"],
            self._limits["max_chars"],
            evolving=self.memory in ("reflection", "transcript_reflection"),
        )

    # -- lifecycle ------------------------------------------------------------------------------------
    def start_session(self, seat: str, rng: np.random.Generator | int, services: Services) -> None:
        self._model = model_config(services.model)
        if services.llm is None:
            raise ConfigError("model", "no LLM client was built for the llm agent")
        pinned = getattr(self._model, "prompt", None)
        if pinned:
            self.prompt = pinned
        if self.reference and self.memory == "ledger":
            raise ConfigError(
                "agent.prompt", "the reference prompt has no ledger memory; use memory=transcript"
            )
        if self.transcript_trim == "auto":
            self._limits["trim"] = "block" if self._model.provider == "local" else "exact"
        game = services.game
        self._announce_passes = game.announce_passes
        super().start_session(seat, rng, services)
        self._compact = bool(getattr(self._model, "prompt_compact", False))
        self._rules = rules_text(game.coins, game.max_rounds, self._compact)
        # The sample index keeps replicate sessions' requests distinct in the store, reproducibly.
        sample = services.sample
        if sample is None:
            sample = int(np.random.default_rng(rng).integers(0, 2**31 - 1))
        self._kit = DecisionKit(services.llm, self._model, sample=sample)

    def forget(self) -> None:
        self.mem = make_memory(self.memory, **self._limits)
        self.ref = self._reference_memory()

    def start_game(self, obs: Observation) -> None:
        self._last_obs = None
        self._announcements = []
        if not self.reference:
            self.mem.start_game(obs)
            return
        # escape_room.py:155-158 (persistent agents, from the second game) then :236-240.
        self.ref.new_game()
        self.ref.mark_game(obs.game)
        coins = obs.my_coins
        if self.ref.games_started > 1:
            for event in rp.new_game_events(obs.puzzle.text, coins):
                self.ref.add(event)
        for event in rp.game_start_events(self._num_questions, obs.puzzle.text, coins):
            self.ref.add(event)

    def observe(self, report: RoundReport) -> None:
        if not self.reference:
            text = announcement_text(report, self._announce_passes)
            self._announcements.append(text)
            self.mem.record_round(report, text)
            return
        start = self._last_obs
        if start is None or start.round != report.round:
            return  # only rounds this agent decided in (it was alive at their start)
        text = round_announcement(report, start, self._announce_passes)
        self.ref.add(rp.announcement_event(report.round, text))

    async def aend_game(self, summary: GameSummary) -> ModelCall | None:
        if self.reference:
            self.ref.add(end_of_game(summary))  # escape_room.py:371-374
            self.ref.add(rp.post_game_review())  # escape_room.py:377-382
            return await self._reflect_reference() if self.ref.evolving else None
        self.mem.end_game(summary)
        if self.mem.reflects:
            return await self._reflect()
        return None

    # -- model calls ----------------------------------------------------------------------------------
    @property
    def kit(self) -> DecisionKit:
        assert self._kit is not None, "start_session was not called"
        return self._kit

    async def adecide(self, obs: Observation) -> Decision:
        return await (self._decide_reference(obs) if self.reference else self._decide_trustsim(obs))

    async def _decide_trustsim(self, obs: Observation) -> Decision:
        messages, stable = decision_request(
            self._rules, obs, self.mem.context(), list(self._announcements), self._compact
        )
        schema = decision_schema(obs, self.kit.reasoning_max_chars)
        answer = await self.kit.decide(
            messages, lambda obj: obj, schema=schema, format="json", stable_chars=stable
        )
        # The kit asked as the model config says; the answer is read by the tolerant parser (JSON bare, in
        # prose or fenced, or the DECISION: form).
        parsed = parse_decision(answer.raw)
        decision = Decision(
            action=parsed.action,
            raw_text=_clip(answer.raw),
            reasoning=_clip(parsed.reasoning, 4_000) if parsed.reasoning else None,
            confidence=parsed.confidence if parsed.confidence is not None else {},
            trusted=parsed.trusted,
            parse_error=parsed.error,
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached=answer.cached,
            request_key=answer.request_key,
            cached_tokens=answer.cached_tokens,
        )
        self.mem.record_decision(obs, decision)
        self._last_obs = obs
        return decision

    def reference_messages(self, obs: Observation) -> list[dict[str, str]]:
        """The study's decision request for this state (escape_room.py:417-491)."""
        prompt = rp.decision_prompt(
            obs.seat,
            self.ref.context(),
            obs.round,
            obs.my_coins,
            obs.puzzle.text,
            rp.capsule_display(grown_labels(obs.capsules)),
            self._num_questions,
        )
        return [{"role": "user", "content": prompt}]

    async def _decide_reference(self, obs: Observation) -> Decision:
        answer = await self.kit.decide(self.reference_messages(obs), str, format="text")
        full = answer.raw.strip()  # the study's helpers strip every answer
        extracted = extract_decision(full)
        self.ref.add(rp.reasoning_event(obs.round, full))  # escape_room.py:494
        self.ref.add(rp.action_event(obs.round, extracted.decision))  # escape_room.py:500
        action = None if extracted.defaulted else decision_action(extracted.decision, self._num_questions)
        reasoning = _REASONING.search(full)
        self._last_obs = obs
        return Decision(
            action=action,
            raw_text=_clip(answer.raw),
            reasoning=_clip(reasoning.group(1).strip(), 4_000) if reasoning else None,
            confidence={},  # the reference asked for no confidence
            parse_error=(
                f"no usable decision ({'empty answer' if not full else 'no valid DECISION line'}): "
                "the reference plays Pass"
                if extracted.defaulted
                else None
            ),
            latency_s=answer.latency_s,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached=answer.cached,
            request_key=answer.request_key,
            cached_tokens=answer.cached_tokens,
        )

    def decide(self, obs: Observation) -> Decision:
        raise RuntimeError("the llm agent is async: the game calls adecide")

    async def asolve(self, puzzle: Puzzle, purpose: str = "verify") -> Solution:
        """Solve a puzzle in a separate stateless call: ``purpose="own_answer"`` (the seat's own puzzle, sent with
        the model config's ``purpose_params.own_answer``) or ``"verify"`` (a verification, call purpose ``solve``:
        ``purpose_params.solve``)."""
        call = "own_answer" if purpose == "own_answer" else "solve"
        if self.reference:
            text = (
                rp.own_answer_prompt(puzzle.text) if call == "own_answer" else rp.verifier_prompt(puzzle.text)
            )
            answer = await self.kit.decide(
                [{"role": "user", "content": text}], str, format="text", purpose=call
            )
            return Solution(solve_answer(answer.raw), _call(answer))
        answer = await self.kit.decide(
            solve_messages(puzzle), lambda obj: obj, schema=SOLVE_SCHEMA, purpose=call
        )
        return Solution(parse_integer(answer.raw), _call(answer))

    async def _reflect_reference(self) -> ModelCall:
        """base_agent.py:91-106: the whole answer replaces the previous reflection."""
        prompt = rp.reflection_prompt(self.ref.context())
        answer = await self.kit.decide(
            [{"role": "user", "content": prompt}], str, format="text", purpose="reflection"
        )
        self.reflections.append(_clip(answer.raw))
        self.ref.reflection = answer.raw.strip()
        return _call(answer)

    async def _reflect(self) -> ModelCall:
        mem: Any = self.mem  # a memory that reflects: ReflectionMemory or TranscriptReflectionMemory
        messages = reflection_messages(self._rules, mem.reflection, mem.game_log(), mem.max_words)
        # Free text (no answer schema): the model config's purpose_params.reflection bound its length; the memory
        # keeps the first max_words words. A JSON {"reflection": ...} answer is unwrapped.
        answer = await self.kit.decide(messages, str, format="text", purpose="reflection")
        text = answer.raw
        try:
            obj = json.loads(text, strict=False)
            if isinstance(obj, dict) and isinstance(obj.get("reflection"), str):
                text = obj["reflection"]
        except (ValueError, RecursionError):
            pass
        self.reflections.append(_clip(text))
        mem.set_reflection(text)
        return _call(answer)
