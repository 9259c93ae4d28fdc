"""The escape-room policy interface the game offers its agents (Axelrod-style: one small class per strategy).

Agents subclass :class:`EscapeRoomPolicy` and register in ``agents/escape_room/__init__.py``."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from games.escape_room.options import EscapeRoomGame
from games.escape_room.types import (
    Decision,
    GameSummary,
    ModelCall,
    Observation,
    Puzzle,
    RoundReport,
    Solution,
)
from trustsim.llm.config import ModelConfig


class Services:
    """Run-wide services a policy may use (the LLM client, recorder hooks). Scripted policies ignore it."""

    def __init__(
        self,
        llm: Any = None,
        model: ModelConfig | None = None,
        game: EscapeRoomGame | None = None,
        sample: int | None = None,
    ) -> None:
        self.llm = llm  # trustsim.llm client or None
        self.model = model  # the seat's model config or None
        self.game = game if game is not None else EscapeRoomGame()  # the validated ``game`` group
        self.sample = sample  # this seat's LLM sample index from the job's seed tree (None: draw from rng)

    def for_seat(self, sample: int) -> Services:
        """A copy carrying one seat's sample index."""
        return Services(self.llm, self.model, self.game, sample)


class EscapeRoomPolicy:
    """Base class for an escape-room decision maker.

    Lifecycle: ``start_session`` once per replicate session; then per game ``start_game``, per round
    ``decide``/``adecide`` then ``observe`` (the round's public report); ``end_game`` at game end. With
    memory ``none`` the engine calls ``forget`` before every game after the first, so nothing crosses games.
    """

    name: ClassVar[str] = "base"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": False,
        "uses_llm": False,
        "memory": "beliefs",  # what crosses games when memory is on
    }

    _rng: np.random.Generator | int = 0  # the stream, or the seed it is made from when first used

    def __init__(self, memory: str = "transcript") -> None:
        self.memory = memory
        self.seat = "?"
        self.services = Services()

    @property
    def rng(self) -> np.random.Generator:
        """The policy's own random stream: the session's (``start_session``; seeded 0 before). A stream given
        as its seed is made when first used: many policies never draw, and making one costs ~17 µs."""
        rng = self._rng
        if not isinstance(rng, np.random.Generator):
            rng = self._rng = np.random.default_rng(rng)
        return rng

    @rng.setter
    def rng(self, value: np.random.Generator | int) -> None:
        self._rng = value

    @property
    def model_name(self) -> str:
        return "scripted"

    def start_session(self, seat: str, rng: np.random.Generator | int, services: Services) -> None:
        """``rng``: the session's random stream, or its seed (``np.random.default_rng(seed)`` is then made when
        the policy first draws: the same stream)."""
        self.seat = seat
        self.rng = rng
        self.services = services
        self.forget()

    def forget(self) -> None:
        """Drop everything learned so far (memoryless mode calls this between games)."""

    def start_game(self, obs: Observation) -> None:
        """Called once per game with the first observation, before round 1's decision."""

    def decide(self, obs: Observation) -> Decision:
        raise NotImplementedError

    async def asolve(self, puzzle: Puzzle, purpose: str = "verify") -> Solution:
        """Solve a puzzle privately (``verifier: llm`` → ``purpose="verify"``, ``own_answer: llm`` →
        ``purpose="own_answer"``); scripted policies are exact (no model call)."""
        return Solution(puzzle.answer)

    async def adecide(self, obs: Observation) -> Decision:
        """Async decision; LLM policies override this. Scripted policies reuse ``decide``."""
        return self.decide(obs)

    def observe(self, report: RoundReport) -> None:
        """The public announcement of a round this seat was alive at the start of."""

    def end_game(self, summary: GameSummary) -> None:
        """The end-of-game summary."""

    async def aend_game(self, summary: GameSummary) -> ModelCall | None:
        """Async end of game (LLM reflection memory overrides this): the model call it made (a reflection),
        if any, for the game's events."""
        self.end_game(summary)
        return None

    is_async: ClassVar[bool] = False  # True for policies whose adecide does real I/O
