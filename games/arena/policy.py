"""The arena player interface the game offers its agents (Axelrod-style: one small class per strategy, with a
classifier dict). Agents subclass :class:`ArenaPlayer` and register in ``agents/arena/__init__.py``."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from games.arena.rules import COOPERATE, DEFECT, Move
from games.arena.types import Decision, MatchInfo, View


class ArenaPlayer:
    """Base class of an arena decision maker.

    Lifecycle per match: ``reset(rng, info)`` once, then ``decide(view)`` (or ``adecide``) every round.
    A player holds no state that ``reset`` does not clear, so one instance can play many matches.

    Class attributes:
        name: short strategy name used in tables.
        classifier: Axelrod-style properties (``stochastic``, ``memory_depth``, ``uses_llm``,
            ``states_confidence``).
    """

    name: ClassVar[str] = "base"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": False,
        "memory_depth": 0,
        "uses_llm": False,
        "states_confidence": False,
    }
    is_async: ClassVar[bool] = False

    def __init__(self) -> None:
        self.rng: np.random.Generator = np.random.default_rng(0)
        self.info: MatchInfo | None = None

    @property
    def model_name(self) -> str:
        """The model behind the player (``scripted`` for strategies)."""
        return "scripted"

    @property
    def label(self) -> str:
        """How the player is named to a named opponent and in tables."""
        return self.name

    def reset(self, rng: np.random.Generator, info: MatchInfo) -> None:
        """Start a match: take the match's generator and information, drop any previous state."""
        self.rng = rng
        self.info = info

    def strategy(self, view: View) -> Move:
        """The intended move (scripted players override this)."""
        raise NotImplementedError

    def decide(self, view: View) -> Decision:
        """The round's decision; scripted players state no confidence."""
        return Decision(self.strategy(view))

    async def adecide(self, view: View) -> Decision:
        """Async decision; LLM players override this, scripted players reuse ``decide``."""
        return self.decide(view)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def last_or(view: View, default: Move) -> Move:
    """The opponent's last executed move, or ``default`` in round 1."""
    return view.opponent[-1] if view.opponent else default


__all__ = ["COOPERATE", "DEFECT", "ArenaPlayer", "last_or"]


@runtime_checkable
class ModelPlayer(Protocol):
    """A player that calls a model (its ``classifier["uses_llm"]``): the job binds its client, the job's
    model name (None: the player's own client names it) and the sample index before play."""

    def bind(self, client: Any, model: str | None = None, sample: int = 0) -> None: ...
