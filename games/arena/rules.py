"""Arena rules as plain deterministic code: moves, payoffs, noise, horizon."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Move = Literal["C", "D"]
COOPERATE: Move = "C"
DEFECT: Move = "D"
MOVES: tuple[Move, Move] = (COOPERATE, DEFECT)


@dataclass(frozen=True, slots=True)
class Payoffs:
    """Prisoner's dilemma payoffs: reward R (both C), punishment P (both D), sucker S, temptation T.

    A dilemma needs T > R > P > S. The usual repeated-game condition 2R > T + S is *not* required, so that
    high temptations (T = 7, 12 with R = 3, S = 0) can be studied; there, alternating C/D pays more than
    mutual cooperation.
    """

    R: float = 3.0
    P: float = 1.0
    S: float = 0.0
    T: float = 5.0

    def __post_init__(self) -> None:
        if not self.T > self.R > self.P > self.S:
            raise ValueError(
                f"payoffs must satisfy T > R > P > S; got T={self.T}, R={self.R}, P={self.P}, S={self.S}"
            )

    def pair(self, a: Move, b: Move) -> tuple[float, float]:
        """Payoffs of (a, b) when player one plays ``a`` and player two plays ``b``."""
        if a == COOPERATE:
            return (self.R, self.R) if b == COOPERATE else (self.S, self.T)
        return (self.T, self.S) if b == COOPERATE else (self.P, self.P)


def flip(move: Move) -> Move:
    """The other move."""
    return DEFECT if move == COOPERATE else COOPERATE


def apply_noise(move: Move, noise: float, rng: np.random.Generator) -> tuple[Move, bool]:
    """Execute an intended move: with probability ``noise`` it is flipped. Returns (executed, flipped).

    One uniform draw is taken whatever ``noise`` is, so the noise stream stays aligned across settings.
    """
    flipped = bool(rng.random() < noise)
    return (flip(move) if flipped else move), flipped


@dataclass(frozen=True, slots=True)
class Horizon:
    """How long a match lasts and what the players are told.

    ``announced``: exactly ``rounds`` rounds, and the players know the number.
    ``unknown``: after every round another one follows with probability ``continuation`` (the players are
    told this probability, not the length); the length is drawn at match start and capped at ``rounds``.
    """

    kind: Literal["announced", "unknown"] = "announced"
    rounds: int = 20
    continuation: float = 0.95

    def __post_init__(self) -> None:
        if self.kind not in ("announced", "unknown"):
            raise ValueError(f"horizon must be 'announced' or 'unknown', got {self.kind!r}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {self.rounds}")
        if not 0.0 <= self.continuation < 1.0:
            raise ValueError(f"continuation must be in [0, 1), got {self.continuation}")

    def draw_length(self, rng: np.random.Generator) -> int:
        """The match length: ``rounds`` when announced, else a geometric draw capped at ``rounds``."""
        if self.kind == "announced":
            return self.rounds
        return int(min(self.rounds, rng.geometric(1.0 - self.continuation)))


InvalidRule = Literal["repeat", "cooperate", "defect"]


def resolve_invalid(rule: InvalidRule, own_history: tuple[Move, ...] | list[Move]) -> Move:
    """The move an invalid answer resolves to.

    ``repeat`` (default): the player's own previous executed move, cooperate in round 1;
    ``cooperate`` / ``defect``: that move always.
    """
    if rule == "repeat":
        return own_history[-1] if own_history else COOPERATE
    if rule == "cooperate":
        return COOPERATE
    if rule == "defect":
        return DEFECT
    raise ValueError(f"unknown invalid-move rule {rule!r} (use repeat, cooperate or defect)")
