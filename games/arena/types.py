"""Value types shared by the arena rules, model and players."""

from __future__ import annotations

from dataclasses import dataclass

from games.arena.rules import Move, Payoffs
from trustsim.horizon import Horizon


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a player is told at match start.

    Attributes:
        payoffs: the payoff table.
        horizon: the match horizon (players learn ``rounds`` only when it is announced).
        opponent: the opponent's label when the opponent is named, else None (anonymous).
        noise: probability that an intended move is flipped.
        seat: this player's seat, ``A`` or ``B``.
    """

    payoffs: Payoffs
    horizon: Horizon
    opponent: str | None
    noise: float
    seat: str

    @property
    def announced_rounds(self) -> int | None:
        """The number of rounds if announced, else None."""
        return self.horizon.told_rounds


@dataclass(frozen=True, slots=True)
class View:
    """A player's view at the start of a round: executed moves so far (own and opponent's) and payoffs."""

    round: int
    own: tuple[Move, ...]
    opponent: tuple[Move, ...]
    own_payoff: float
    opponent_payoff: float
    info: MatchInfo


@dataclass(slots=True)
class Decision:
    """A player's answer for one round.

    ``move`` is None when the answer was invalid (it is then resolved by the game's rule); ``p_cooperate`` is
    the stated P(opponent cooperates this round), None when not stated or unparseable.
    """

    move: Move | None
    p_cooperate: float | None = None
    reasoning: str = ""
    raw: str = ""
    valid: bool = True
    invalid_reason: str | None = None
    p_invalid_reason: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    request_key: str | None = None  # the request-store key of a model's answer (the viewer shows the request)
