"""The trust-game player interface: one small class per strategy, playing either role."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from games.trust_game.types import Decision, PairInfo, TrusteeView, TrustorView

_UNSET = np.random.default_rng(0)  # replaced by reset(); one shared generator keeps construction cheap


class TrustPlayer:
    """Base class of a trust-game decision maker.

    Lifecycle per pair: ``reset(rng, info)`` once (``info.role`` says which role it plays), then ``send(view)``
    (trustor) or ``give_back(view)`` (trustee) every round, or their async twins ``asend``/``agive_back``.
    A player holds no state that ``reset`` does not clear.

    Class attributes:
        name: short strategy name.
        classifier: properties (``stochastic``, ``uses_llm``, ``confidence_roles``: the roles in which the
            player states a native confidence).
    """

    name: ClassVar[str] = "base"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "uses_llm": False, "confidence_roles": ()}
    is_async: ClassVar[bool] = False

    def __init__(self) -> None:
        self.rng: np.random.Generator = _UNSET
        self.info: PairInfo | None = None

    @property
    def model_name(self) -> str:
        """The model behind the player (``scripted`` for strategies)."""
        return "scripted"

    def reset(self, rng: np.random.Generator, info: PairInfo) -> None:
        """Start a pair: take the pair's generator and information, drop any previous state."""
        self.rng = rng
        self.info = info

    def send(self, view: TrustorView) -> Decision:
        """The trustor's decision: how much of the endowment to send."""
        raise NotImplementedError

    def give_back(self, view: TrusteeView) -> Decision:
        """The trustee's decision: how much of the received amount to return."""
        raise NotImplementedError

    async def asend(self, view: TrustorView) -> Decision:
        """Async trustor decision; LLM players override it, scripted players reuse ``send``."""
        return self.send(view)

    async def agive_back(self, view: TrusteeView) -> Decision:
        """Async trustee decision; LLM players override it, scripted players reuse ``give_back``."""
        return self.give_back(view)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
