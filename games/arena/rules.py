"""Arena rules as plain deterministic code: moves, payoffs, noise (the horizon: :class:`trustsim.horizon.Horizon`)."""

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
