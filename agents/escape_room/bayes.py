"""A trust-forming offline agent: Beta beliefs about each partner's reliability, verify only when it pays."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.escape_room.base import EscapeRoomPolicy
from agents.escape_room.views import is_verified, original_label, trusted_capsule
from games.escape_room.types import Action, CapsuleView, Decision, GameSummary, Observation, RoundReport
from trustsim.errors import ParameterError


class BayesAgent(EscapeRoomPolicy):
    """Keeps Beta(α, β) over each partner seat's probability of sealing a right answer.

    Evidence (from public announcements only): a verification that endorses the owner's original capsule
    (α += 1), one that disagrees and opens a new capsule (β += 1), a failed password (β shared among the
    unverified owners by their posterior probability of having been wrong), an escape (α += 1 for every unverified owner
    whose capsule was in the winning password), and the revealed truth when ``reveal_after_game`` is on. At
    most one verdict per owner per game. Each round it verifies the unverified puzzle with the largest
    expected loss ``(1 − p) × coins`` if that exceeds the coin a verification costs; otherwise it
    volunteers. With memory ``none`` the engine calls ``forget`` before every game.
    """

    name = "bayes"
    classifier: ClassVar[dict[str, Any]] = {
        "stochastic": True,
        "uses_llm": False,
        "memory": "beliefs",
        "states_confidence": True,
    }

    def __init__(
        self,
        memory: str = "transcript",
        prior_alpha: float = 1.0,
        prior_beta: float = 1.0,
        verify_cost: float = 1.0,
    ) -> None:
        super().__init__(memory=memory)
        for key, value in (("prior_alpha", prior_alpha), ("prior_beta", prior_beta)):
            if not value > 0:
                raise ParameterError(key, f"must be > 0, got {value}")
        self.prior = (float(prior_alpha), float(prior_beta))
        self.verify_cost = float(verify_cost)
        self.alpha: dict[str, float] = {}
        self.beta: dict[str, float] = {}
        self._judged: set[str] = set()
        self._owners: dict[int, str] = {}
        self._originals: dict[int, str] = {}  # puzzle → its owner's original capsule label (this game)
        self._stated: dict[str, float] = {}  # seat → its stated reliability, until its beliefs change

    # -- beliefs -------------------------------------------------------------------------------------------
    def forget(self) -> None:
        self.alpha.clear()
        self.beta.clear()
        self._stated.clear()

    def reliability(self, seat: str) -> float:
        a = self.alpha.get(seat, self.prior[0])
        b = self.beta.get(seat, self.prior[1])
        return a / (a + b)

    def _add(self, seat: str, success: float, failure: float) -> None:
        self.alpha[seat] = self.alpha.get(seat, self.prior[0]) + success
        self.beta[seat] = self.beta.get(seat, self.prior[1]) + failure
        self._stated.pop(seat, None)

    def _stated_reliability(self, seat: str) -> float:
        """``round(reliability(seat), 6)``, the confidence stated in an unverified capsule of ``seat``'s."""
        p = self._stated.get(seat)
        if p is None:
            p = self._stated[seat] = round(self.reliability(seat), 6)
        return p

    def _verdict(self, seat: str, correct: bool) -> None:
        if seat == self.seat or seat in self._judged:
            return
        self._judged.add(seat)
        self._add(seat, 1.0 if correct else 0.0, 0.0 if correct else 1.0)

    # -- game lifecycle --------------------------------------------------------------------------------------
    def start_game(self, obs: Observation) -> None:
        self._judged = set()
        self._owners = dict(obs.owners)
        self._originals = {k: original_label(k, owner) for k, owner in self._owners.items()}

    def _trusted(self, obs: Observation) -> dict[int, CapsuleView]:
        """The trusted capsule per puzzle (:func:`trusted_capsule`; a puzzle's only capsule needs no search)."""
        out = {}
        for k in sorted(obs.capsules):
            capsules = obs.capsules[k]
            out[k] = capsules[0] if len(capsules) == 1 else trusted_capsule(obs, k)
        return out

    def confidence(self, obs: Observation, trusted: dict[int, CapsuleView] | None = None) -> dict[int, float]:
        """P(the trusted capsule is right) per puzzle, under the belief that verifiers are exact."""
        trusted = self._trusted(obs) if trusted is None else trusted
        out = {}
        for k, capsule in trusted.items():
            owner = obs.owners[k]
            if owner == self.seat or is_verified(capsule, owner):
                out[k] = 1.0
            else:
                out[k] = self._stated_reliability(owner)
        return out

    def decide(self, obs: Observation) -> Decision:
        # One pass over the puzzles: the trusted capsule (:meth:`_trusted`), its confidence (:meth:`confidence`)
        # and the expected loss of trusting it, inlined on this hot path (the same values).
        seat, owners, tables = self.seat, obs.owners, obs.capsules
        stated, state = self._stated.get, self._stated_reliability
        coins = obs.coins[obs.seat]
        conf: dict[int, float] = {}
        trusted: dict[int, str] = {}  # also the best password
        losses: dict[int, float] = {}
        for k in sorted(tables):
            capsules = tables[k]
            capsule = capsules[0] if len(capsules) == 1 else trusted_capsule(obs, k)
            trusted[k] = capsule.label
            owner, endorsers = owners[k], capsule.endorsers
            if owner == seat or (  # own, or verified (:func:`is_verified`; most capsules have one endorser)
                endorsers
                and (endorsers[0] != owner or (len(endorsers) > 1 and any(e != owner for e in endorsers)))
            ):
                conf[k] = 1.0
                continue
            p = conf[k] = stated(owner) or state(owner)  # a stated 0.0 is recomputed: the same value
            if p < 1.0:
                losses[k] = (1.0 - p) * coins
        worst = max(losses.values(), default=0.0)
        if coins > 0 and worst > self.verify_cost:
            candidates = sorted(k for k, loss in losses.items() if loss == worst)
            # rng.integers(1) draws nothing from the stream, so a lone candidate needs no call (same stream)
            target = (
                candidates[0] if len(candidates) == 1 else candidates[int(self.rng.integers(len(candidates)))]
            )
            action = Action("verify", target)
        else:
            action = Action("volunteer", None, dict(trusted))  # Action.volunteer, built directly
        return Decision(action, None, None, conf, trusted)  # action, raw_text, reasoning, confidence, trusted

    def observe(self, report: RoundReport) -> None:
        owners, originals = self._owners, self._originals
        for v in report.verifications:
            owner = owners[v.puzzle]
            if v.created:
                self._verdict(owner, False)
            elif v.capsule == originals[v.puzzle]:
                self._verdict(owner, True)
            else:
                self._verdict(owner, False)  # endorsed someone else's capsule: the original disagrees
        if report.password is None or report.password_correct is None:
            return
        suspects = [
            owners[k]
            for k, label in report.password.items()
            if label == originals[k] and owners[k] != self.seat and owners[k] not in self._judged
        ]
        if report.password_correct:
            for seat in suspects:
                self._verdict(seat, True)
        elif suspects:
            # P(owner i was wrong | at least one suspect was wrong), suspects independent.
            p_all_right = 1.0
            for seat in suspects:
                p_all_right *= self.reliability(seat)
            for seat in suspects:
                self._add(seat, 0.0, (1.0 - self.reliability(seat)) / max(1.0 - p_all_right, 1e-12))

    def end_game(self, summary: GameSummary) -> None:
        if summary.capsule_truth:
            for k, owner in self._owners.items():
                label = original_label(k, owner)
                if label in summary.capsule_truth:
                    self._verdict(owner, summary.capsule_truth[label])
