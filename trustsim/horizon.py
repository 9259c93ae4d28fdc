"""How long a repeated game lasts and what its players are told: one :class:`Horizon` for every game."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Horizon:
    """A fixed length the players are told, or a continuation probability.

    ``known``: exactly ``rounds`` rounds, and the players are told the number. Otherwise after every round
    another follows with probability ``continue_p`` (the players are told the probability, not the length):
    the length is drawn when play starts, geometric with mean ``1 / (1 - continue_p)``, capped at
    ``max_rounds``.
    """

    rounds: int = 1
    continue_p: float = 0.9
    known: bool = True
    max_rounds: int = 50

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {self.rounds}")
        if not 0.0 <= self.continue_p < 1.0:
            raise ValueError(f"continue_p must be in [0, 1), got {self.continue_p}")
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {self.max_rounds}")

    @property
    def repeated(self) -> bool:
        """True when more than one round can be played."""
        return not self.known or self.rounds > 1

    @property
    def told_rounds(self) -> int | None:
        """The number of rounds the players are told (None when the horizon is unknown)."""
        return self.rounds if self.known else None

    def draw_length(self, rng: np.random.Generator) -> int:
        """The number of rounds: ``rounds`` when known, else the drawn length capped at ``max_rounds``.

        One draw is taken whatever the horizon, so a stream shared with other draws stays aligned across
        settings.
        """
        drawn = int(rng.geometric(1.0 - self.continue_p))
        return self.rounds if self.known else min(self.max_rounds, drawn)

    def has_next(self, round_: int) -> bool | None:
        """What a player may know about whether a round follows round ``round_``: True/False when the horizon
        is known, None when unknown."""
        return round_ < self.rounds if self.known else None
