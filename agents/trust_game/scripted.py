"""Scripted trust-game baselines, one small class each; every one plays both roles."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.trust_game.base import TrustPlayer
from games.trust_game.rules import round_half_up
from games.trust_game.types import Decision, TrusteeView, TrustorView, scripted_decision
from trustsim.errors import ParameterError


def _classifier(**kw: Any) -> dict[str, Any]:
    return {"stochastic": False, "uses_llm": False, "confidence_roles": (), **kw}


class Selfish(TrustPlayer):
    """The subgame-perfect self-interested player: sends 0 and returns 0."""

    name = "tg_selfish"
    classifier: ClassVar[dict[str, Any]] = _classifier()

    def send(self, view: TrustorView) -> Decision:
        return scripted_decision(0)

    def give_back(self, view: TrusteeView) -> Decision:
        return scripted_decision(0)


class Fair(TrustPlayer):
    """Sends the whole endowment and returns half of what it received (halves round up: 15 of 30, 8 of 15)."""

    name = "tg_fair"
    classifier: ClassVar[dict[str, Any]] = _classifier()

    def send(self, view: TrustorView) -> Decision:
        return scripted_decision(view.info.stakes.endowment)

    def give_back(self, view: TrusteeView) -> Decision:
        return scripted_decision(round_half_up(view.received / 2))


class Reciprocal(TrustPlayer):
    """Conditional trust and reciprocity.

    Trustor: opens with ``opening`` × E, then sends E × min(1, ``gain`` × the last return ratio r/(k·s)) it
    saw (gain 2: a trustee returning half sends the trustor back to full trust; one returning nothing stops
    it). It states the expected return (last ratio × k·s, the opening guess ``opening`` × k·s before any) and
    P(r ≥ s) by Laplace's rule over the rounds it saw, so the calibration path runs without a model.
    Trustee: returns the fraction ``return_share`` × s/E of what it received (more trust, a larger share:
    half of everything when sent all).
    """

    name = "tg_reciprocal"
    classifier: ClassVar[dict[str, Any]] = _classifier(confidence_roles=("trustor",))

    def __init__(self, opening: float = 0.5, gain: float = 2.0, return_share: float = 0.5) -> None:
        super().__init__()
        for key, value, hi in (
            ("opening", opening, 1.0),
            ("gain", gain, None),
            ("return_share", return_share, 1.0),
        ):
            if value < 0 or (hi is not None and value > hi):
                raise ParameterError(key, f"must be in [0, {hi or 'inf'}], got {value}")
        self.opening = float(opening)
        self.gain = float(gain)
        self.return_share = float(return_share)

    def send(self, view: TrustorView) -> Decision:
        e, k = view.info.stakes.endowment, view.info.stakes.multiplier
        seen = [x for x in view.past if x.sent > 0]
        ratio = seen[-1].returned / seen[-1].received if seen else None
        s = round_half_up(e * (self.opening if ratio is None else min(1.0, self.gain * ratio)))
        expected = float(k * s * (self.opening if ratio is None else ratio))
        paid_back = sum(x.returned >= x.sent for x in seen)
        return scripted_decision(s, expected=expected, p=(paid_back + 1) / (len(seen) + 2))

    def give_back(self, view: TrusteeView) -> Decision:
        share = self.return_share * view.sent / view.info.stakes.endowment
        return scripted_decision(min(view.received, round_half_up(share * view.received)))


class RandomPlayer(TrustPlayer):
    """Sends a uniform draw from 0..E and returns a uniform draw from 0..k·s."""

    name = "tg_random"
    classifier: ClassVar[dict[str, Any]] = _classifier(stochastic=True)

    def send(self, view: TrustorView) -> Decision:
        return scripted_decision(int(self.rng.integers(0, view.info.stakes.endowment + 1)))

    def give_back(self, view: TrusteeView) -> Decision:
        return scripted_decision(int(self.rng.integers(0, view.received + 1)))


BERG_1995_SENT: dict[int, int] = {0: 2, 1: 2, 2: 2, 3: 4, 4: 2, 5: 6, 6: 5, 7: 3, 8: 1, 10: 5}
"""Amounts sent by the 32 trustors of the no-history treatment of Berg, Dickhaut & McCabe (1995), "Trust,
Reciprocity, and Social History", Games and Economic Behavior 10, 122–142 (endowment 10): amount → count.
Mean 5.16; 30 of 32 sent something (specs/trust_game.md)."""

JOHNSON_MISLIN_2011_RETURN_FRACTION = 0.37
"""Mean fraction of the received amount returned across 162 replications, Johnson & Mislin, "Trust games: A
meta-analysis", Journal of Economic Psychology 32 (2011) 865–889 (approximate reference point)."""

RETURN_CONCENTRATION = 2.0
"""α + β of ``tg_human``'s Beta distribution of return shares (standard deviation 0.28 at mean 0.37)."""


class Human(TrustPlayer):
    """An empirical human reference.

    Trustor: samples s/E from the Berg et al. (1995) no-history distribution of amounts sent (32 trustors,
    endowment 10), so with E = 10 it sends exactly those amounts; with another E the sampled fraction is
    scaled and rounded. Trustee: returns a share of what it received drawn from a Beta distribution whose
    mean is the Johnson & Mislin (2011) meta-analytic share returned (0.37), rounded half up. The
    meta-analysis reports the mean, not the spread of individual returns, which in the lab ranges from
    nothing to more than half; ``return_concentration`` (α + β, default :data:`RETURN_CONCENTRATION`) sets
    the spread: smaller is wider (2: standard deviation 0.28, quartiles 0.12, 0.32 and 0.59), larger
    narrows it towards 0.37 for everyone.
    """

    name = "tg_human"
    classifier: ClassVar[dict[str, Any]] = _classifier(stochastic=True)
    _amounts: ClassVar[list[int]] = list(BERG_1995_SENT)
    _cdf = np.cumsum(list(BERG_1995_SENT.values())) / sum(BERG_1995_SENT.values())

    def __init__(self, return_concentration: float = RETURN_CONCENTRATION) -> None:
        super().__init__()
        if not return_concentration > 0:
            raise ParameterError("return_concentration", f"must be > 0, got {return_concentration}")
        mean = JOHNSON_MISLIN_2011_RETURN_FRACTION
        self.return_concentration = float(return_concentration)
        self._beta = (mean * self.return_concentration, (1 - mean) * self.return_concentration)

    def send(self, view: TrustorView) -> Decision:
        i = min(int(np.searchsorted(self._cdf, self.rng.random(), side="right")), len(self._amounts) - 1)
        fraction = self._amounts[i] / 10.0
        return scripted_decision(round_half_up(fraction * view.info.stakes.endowment))

    def give_back(self, view: TrusteeView) -> Decision:
        share = float(self.rng.beta(*self._beta))
        return scripted_decision(min(view.received, round_half_up(share * view.received)))


SCRIPTED: tuple[type[TrustPlayer], ...] = (Selfish, Fair, Reciprocal, RandomPlayer, Human)
"""Every scripted baseline."""
