"""Shared helpers of the trust-game tests: play a session of scripted players in a Mesa model."""

from __future__ import annotations

from typing import Any

from agents.trust_game.base import TrustPlayer
from games.trust_game.model import PairRecord, TrustGameModel
from games.trust_game.rules import Stakes
from trustsim.horizon import Horizon


def session(
    trustor: type[TrustPlayer] | TrustPlayer,
    trustee: type[TrustPlayer] | TrustPlayer,
    *,
    pairs: int = 1,
    rounds: int = 1,
    seed: int = 0,
    stakes: Stakes | None = None,
    **kw: Any,
) -> list[PairRecord]:
    """Play a session synchronously; player classes are instantiated once per pair."""

    def make(p: type[TrustPlayer] | TrustPlayer) -> TrustPlayer:
        return p() if isinstance(p, type) else p

    model = TrustGameModel(
        seed=seed,
        players=[(make(trustor), make(trustee)) for _ in range(pairs)],
        stakes=stakes or Stakes(),
        horizon=kw.pop("horizon", Horizon(rounds)),
        **kw,
    )
    return model.play()


def amounts(pair: PairRecord) -> list[tuple[int, int]]:
    """(sent, returned) per round."""
    return [(x.sent, x.returned) for x in pair.exchanges]
