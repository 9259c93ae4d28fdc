"""The policy interface of the public-goods game and its scripted players (agents import the game, never the
reverse; in a plugin both live in one package)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from trustsim.errors import ParameterError


@dataclass(frozen=True)
class View:
    """What a player sees before it contributes: the round, the endowment, and the contributions so far."""

    round: int
    rounds: int
    endowment: int
    own: tuple[int, ...]
    partner: tuple[int, ...]


@dataclass(frozen=True)
class Choice:
    """A contribution, and optionally the stated P(the partner contributes at least half the endowment)."""

    contribution: int
    p_partner_half: float | None = None


class Player:
    """Base class: ``contribute(view) -> Choice``."""

    name: ClassVar[str] = "base"

    def contribute(self, view: View) -> Choice:  # pragma: no cover - every player overrides it
        raise NotImplementedError


class Full(Player):
    """Contributes everything."""

    name = "pg_full"

    def contribute(self, view: View) -> Choice:
        return Choice(view.endowment)


class FreeRider(Player):
    """Contributes nothing."""

    name = "pg_free_rider"

    def contribute(self, view: View) -> Choice:
        return Choice(0)


class Conditional(Player):
    """Contributes what the partner contributed last round (``opening`` of the endowment first) and states how
    often the partner gave at least half so far as its probability that it will again (0.5 before any round)."""

    name = "pg_conditional"

    def __init__(self, opening: float = 0.5) -> None:
        if not 0.0 <= opening <= 1.0:
            raise ParameterError("opening", f"must be in [0, 1], got {opening}")
        self.opening = opening

    def contribute(self, view: View) -> Choice:
        half = view.endowment / 2
        p = sum(c >= half for c in view.partner) / len(view.partner) if view.partner else 0.5
        amount = view.partner[-1] if view.partner else round(self.opening * view.endowment)
        return Choice(amount, p)
