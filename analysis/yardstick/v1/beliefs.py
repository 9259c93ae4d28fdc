"""``v1`` beliefs (superseded by the exact posterior of :mod:`analysis.yardstick.beliefs`; kept only for the
``--model v1`` comparison): Beta beliefs per partner from public evidence, the ``bayes`` agent's heuristic.

The evidence rules are those of the ``bayes`` agent (``agents/escape_room/bayes.py``), stated here so the
yardstick stands on its own:

- a verification that endorses the owner's original capsule: the owner was right (α += 1);
- one that opens a new capsule or endorses another seat's capsule: the owner was wrong (β += 1);
- a failed password: β is shared among the unjudged owners whose original capsule it used, in proportion to
  each one's posterior probability of having been wrong; an escape: α += 1 for each of them;
- the revealed truth (``reveal_after_game``), when the game reveals it;
- at most one verdict per owner per game; a seat never judges itself. A seat hears a round's announcement
  only if it was alive at the start of that round. Beliefs persist across the games of a session, except with
  memory ``none`` (reset before every game).
"""

from __future__ import annotations

from analysis.yardstick.traces import GameTrace, RoundTrace


class Beliefs:
    """One seat's Beta(α, β) per other seat; ``prior`` is (α₀, β₀)."""

    def __init__(self, seat: str, prior: tuple[float, float] = (1.0, 1.0)) -> None:
        if prior[0] <= 0 or prior[1] <= 0:
            raise ValueError("the prior's alpha and beta must be > 0")
        self.seat = seat
        self.prior = (float(prior[0]), float(prior[1]))
        self.alpha: dict[str, float] = {}
        self.beta: dict[str, float] = {}
        self.judged: set[str] = set()

    def forget(self) -> None:
        self.alpha.clear()
        self.beta.clear()

    def start_game(self) -> None:
        self.judged = set()

    def reliability(self, seat: str) -> float:
        """Posterior mean of ``seat``'s probability of sealing a right answer."""
        a = self.alpha.get(seat, self.prior[0])
        b = self.beta.get(seat, self.prior[1])
        return a / (a + b)

    def _add(self, seat: str, success: float, failure: float) -> None:
        self.alpha[seat] = self.alpha.get(seat, self.prior[0]) + success
        self.beta[seat] = self.beta.get(seat, self.prior[1]) + failure

    def _verdict(self, seat: str, correct: bool) -> None:
        if seat == self.seat or seat in self.judged:
            return
        self.judged.add(seat)
        self._add(seat, 1.0 if correct else 0.0, 0.0 if correct else 1.0)

    def observe(self, rnd: RoundTrace, owners: dict[int, str]) -> None:
        """Update from one round's announcement."""
        for v in rnd.verifications:
            owner = owners[v.puzzle]
            self._verdict(owner, not v.created and v.creator == owner)
        if rnd.password is None or rnd.correct is None:
            return
        suspects = [
            owners[k]
            for k, creator in sorted(rnd.password.items())
            if creator == owners[k] and owners[k] != self.seat and owners[k] not in self.judged
        ]
        if rnd.correct:
            for seat in suspects:
                self._verdict(seat, True)
        elif suspects:
            p_all_right = 1.0
            for seat in suspects:
                p_all_right *= self.reliability(seat)
            for seat in suspects:
                self._add(seat, 0.0, (1.0 - self.reliability(seat)) / max(1.0 - p_all_right, 1e-12))

    def end_game(self, game: GameTrace) -> None:
        """The revealed truth of the owners' original capsules, if the game revealed it."""
        for (k, creator), right in (game.truth or {}).items():
            owner = game.owners[k]
            if creator == owner:
                self._verdict(owner, right)
