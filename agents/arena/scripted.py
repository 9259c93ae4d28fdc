"""Scripted arena strategies, one small class each."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.arena.base import COOPERATE, DEFECT, ArenaPlayer, last_or
from games.arena.rules import Move, Payoffs, flip
from games.arena.types import Decision, View
from trustsim.errors import ParameterError


def _classifier(**kw: Any) -> dict[str, Any]:
    base = {"stochastic": False, "memory_depth": 1, "uses_llm": False, "states_confidence": False}
    return {**base, **kw}


class Cooperator(ArenaPlayer):
    """Always cooperates."""

    name = "always_cooperate"
    classifier: ClassVar[dict[str, Any]] = _classifier(memory_depth=0)

    def strategy(self, view: View) -> Move:
        return COOPERATE


class Defector(ArenaPlayer):
    """Always defects."""

    name = "always_defect"
    classifier: ClassVar[dict[str, Any]] = _classifier(memory_depth=0)

    def strategy(self, view: View) -> Move:
        return DEFECT


class TitForTat(ArenaPlayer):
    """Cooperates first, then copies the opponent's last move."""

    name = "tit_for_tat"
    classifier: ClassVar[dict[str, Any]] = _classifier()

    def strategy(self, view: View) -> Move:
        return last_or(view, COOPERATE)


class SuspiciousTitForTat(ArenaPlayer):
    """Defects first, then copies the opponent's last move."""

    name = "suspicious_tit_for_tat"
    classifier: ClassVar[dict[str, Any]] = _classifier()

    def strategy(self, view: View) -> Move:
        return last_or(view, DEFECT)


class GrimTrigger(ArenaPlayer):
    """Cooperates until the opponent defects once, then defects for the rest of the match."""

    name = "grim_trigger"
    classifier: ClassVar[dict[str, Any]] = _classifier(memory_depth=float("inf"))

    def strategy(self, view: View) -> Move:
        return DEFECT if DEFECT in view.opponent else COOPERATE


class Pavlov(ArenaPlayer):
    """Win-stay, lose-shift: cooperates first; repeats its move after R or T, switches after P or S."""

    name = "pavlov"
    classifier: ClassVar[dict[str, Any]] = _classifier()

    def strategy(self, view: View) -> Move:
        if not view.own:
            return COOPERATE
        # CC (R) stays C, DC (T) stays D, CD (S) shifts to D, DD (P) shifts to C
        return COOPERATE if view.own[-1] == view.opponent[-1] else DEFECT


class RandomPlayer(ArenaPlayer):
    """Cooperates with probability ``p`` each round (independently)."""

    name = "random"
    classifier: ClassVar[dict[str, Any]] = _classifier(stochastic=True, memory_depth=0)

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ParameterError("p", f"must be in [0, 1], got {p}")
        self.p = float(p)

    @property
    def label(self) -> str:
        return f"random({self.p:g})"

    def strategy(self, view: View) -> Move:
        return COOPERATE if self.rng.random() < self.p else DEFECT

    def __repr__(self) -> str:
        return f"RandomPlayer(p={self.p})"


AXELROD_GENEROSITY = 1.0 / 3.0
"""The generosity of Axelrod's default GTFT: its formula evaluated at the library's default T = 5, whatever the match."""


def formula_generosity(pay: Payoffs) -> float:
    """Nowak & Sigmund's generosity min(1 - (T - R)/(R - S), (R - P)/(T - P)); it is <= 0 for T >= 2R - S."""
    return min(1.0 - (pay.T - pay.R) / (pay.R - pay.S), (pay.R - pay.P) / (pay.T - pay.P))


def default_generosity(pay: Payoffs | None) -> float:
    """The formula where it is positive, else (and without payoffs) Axelrod's 1/3."""
    g = formula_generosity(pay) if pay is not None else 0.0
    return g if g > 0.0 else AXELROD_GENEROSITY


class GenerousTitForTat(ArenaPlayer):
    """Tit-for-tat that forgives a defection with probability ``generosity`` (Nowak & Sigmund 1992).

    ``generosity=None`` uses ``default_generosity`` of the match payoffs: the formula where it is positive
    (1/3 at T=5), Axelrod's 1/3 where it is not (T >= 6 with R=3, S=0), so GTFT never collapses into TFT.
    """

    name = "generous_tit_for_tat"
    classifier: ClassVar[dict[str, Any]] = _classifier(stochastic=True)

    def __init__(self, generosity: float | None = None) -> None:
        super().__init__()
        if generosity is not None and not 0.0 <= generosity <= 1.0:
            raise ParameterError("generosity", f"must be in [0, 1], got {generosity}")
        self.generosity = generosity

    def forgiveness(self) -> float:
        """The probability of cooperating after an opponent's defection."""
        if self.generosity is not None:
            return self.generosity
        return default_generosity(self.info.payoffs if self.info else None)

    def strategy(self, view: View) -> Move:
        if last_or(view, COOPERATE) == COOPERATE:
            return COOPERATE
        return COOPERATE if self.rng.random() < self.forgiveness() else DEFECT


class NoisyTitForTat(ArenaPlayer):
    """Tit-for-tat whose intended move is flipped with probability ``noise`` (a trembling hand)."""

    name = "noisy_tit_for_tat"
    classifier: ClassVar[dict[str, Any]] = _classifier(stochastic=True)

    def __init__(self, noise: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= noise <= 1.0:
            raise ParameterError("noise", f"must be in [0, 1], got {noise}")
        self.noise = float(noise)

    def strategy(self, view: View) -> Move:
        move = last_or(view, COOPERATE)
        return flip(move) if self.rng.random() < self.noise else move


class ForecastingTitForTat(TitForTat):
    """Tit-for-tat that states P(opponent cooperates) by Laplace's rule: (cooperations + 1) / (rounds + 2).

    An offline player with native confidence, so the calibration path runs without a language model.
    """

    name = "forecasting_tit_for_tat"
    classifier: ClassVar[dict[str, Any]] = _classifier(memory_depth=float("inf"), states_confidence=True)

    def decide(self, view: View) -> Decision:
        coop = view.opponent.count(COOPERATE)
        p = (coop + 1) / (len(view.opponent) + 2)
        return Decision(self.strategy(view), p_cooperate=p, reasoning=f"laplace {coop}/{len(view.opponent)}")


SCRIPTED: tuple[type[ArenaPlayer], ...] = (
    Cooperator,
    Defector,
    TitForTat,
    SuspiciousTitForTat,
    GrimTrigger,
    Pavlov,
    RandomPlayer,
    GenerousTitForTat,
    NoisyTitForTat,
    ForecastingTitForTat,
)
"""Every scripted strategy (the default tournament field)."""
