"""Value types shared by the trust-game rules, model and players: what a role sees and what it answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from games.trust_game.rules import Amount, Stakes
from trustsim.horizon import Horizon

Role = Literal["trustor", "trustee"]
ROLES: tuple[Role, Role] = ("trustor", "trustee")
HistoryMode = Literal["none", "own", "population"]


@dataclass(frozen=True, slots=True)
class PairInfo:
    """What a player is told when its pair starts.

    Attributes:
        role: the player's role in this pair.
        stakes: endowments and multiplier.
        horizon: how long the pair plays (players learn ``rounds`` only when it is known).
        history: what the trustor sees of earlier rounds (``none``, ``own``, ``population``).
        population: Berg's "social history": (sent, count, mean returned) rows of an earlier population.
        partner: the partner's label (agent name or model).
    """

    role: Role
    stakes: Stakes
    horizon: Horizon
    history: HistoryMode = "own"
    population: tuple[tuple[int, int, float], ...] = ()
    partner: str = ""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One resolved exchange as the players may remember it."""

    round: int
    sent: int
    received: int
    returned: int


@dataclass(frozen=True, slots=True)
class TrustorView:
    """The trustor's view before sending: the round and the past exchanges its ``history`` mode shows."""

    round: int
    past: tuple[Exchange, ...]
    info: PairInfo


@dataclass(frozen=True, slots=True)
class TrusteeView:
    """The trustee's view before returning: this round's amounts and its own past exchanges with the trustor."""

    round: int
    sent: int
    received: int
    past: tuple[Exchange, ...]
    info: PairInfo

    @property
    def asks_next(self) -> bool:
        """Whether a next round may follow (then the trustee states P(trustor sends at least as much))."""
        return self.info.horizon.has_next(self.round) is not False


@dataclass(slots=True)
class Decision:
    """One role's answer for one round.

    ``amount`` is the validated amount (invalid → value 0, with the raw text and reason). ``expected`` is the
    trustor's stated expected return (None for trustees or when not stated); ``p`` is the native confidence:
    the trustor's P(r ≥ s), the trustee's P(the trustor sends at least as much next round).
    """

    amount: Amount
    expected: float | None = None
    p: float | None = None
    reasoning: str = ""
    raw: str = ""
    expected_invalid_reason: str | None = None
    p_invalid_reason: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    request_key: str | None = None  # the request-store key of a model's answer (the viewer shows the request)
    asked: bool = True  # False when no decision was needed (a trustee receiving 0)


def scripted_decision(value: int, *, expected: float | None = None, p: float | None = None) -> Decision:
    """A scripted player's (always valid) decision."""
    return Decision(Amount(value, True, str(value)), expected=expected, p=p)


NOTHING_TO_RETURN = Decision(Amount(0, True, ""), asked=False)
"""The trustee's non-decision when nothing was sent: r = 0 and no model is asked."""


@runtime_checkable
class Player(Protocol):
    """What the model needs of a player (agents/trust_game/base.py implements it; games never import agents).

    ``classifier["confidence_roles"]`` lists the roles in which the player states a native confidence.
    """

    classifier: ClassVar[dict[str, Any]]
    is_async: ClassVar[bool]

    @property
    def model_name(self) -> str: ...

    @property
    def info(self) -> PairInfo | None: ...

    def reset(self, rng: np.random.Generator, info: PairInfo) -> None: ...

    def send(self, view: TrustorView) -> Decision: ...

    def give_back(self, view: TrusteeView) -> Decision: ...

    async def asend(self, view: TrustorView) -> Decision: ...

    async def agive_back(self, view: TrusteeView) -> Decision: ...


@runtime_checkable
class ModelPlayer(Protocol):
    """A player that calls a model (its agent is registered ``uses_llm``): the job binds its client, model
    config and sample index (the request-store key's) before play."""

    def bind(self, client: Any, model_cfg: Any, sample: int = 0) -> None: ...
