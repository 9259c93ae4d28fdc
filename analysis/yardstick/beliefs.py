"""The exact posterior of a seat's partners' reliabilities given the public evidence of its session.

Each other seat ``s`` seals a right answer with an unknown probability ``θ_s`` (prior Beta(α₀, β₀),
independent across seats), independently from game to game. What a game shows is a set of facts about its
original capsules (:mod:`analysis.yardstick.evidence`): a verification or the revealed truth fixes one
capsule's truth (conjugate: α or β += 1); a failed password says only that the originals it named were not
all right, which couples their owners. The posterior is therefore a mixture of products of Betas, one per
**count vector** (right and wrong capsules per seat) the latent right/wrong states can produce: for each
game the seat enumerates the truth assignments of the capsules its facts mention that agree with them, and
the mixture weight of a count vector is the number of ways to reach it times the Beta integrals. A fact that
is already explained (a failed password that named a capsule a verifier showed wrong) rules nothing out and
so changes nothing; repeating a failed password adds nothing either.

This replaces the ``bayes`` agent's rule (β shared among the suspects of a failed password), which stays that
agent's heuristic (``agents/escape_room/bayes.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from analysis.yardstick.evidence import PUZZLES, WORLDS, Fact, allowed_worlds, bit

View = tuple[float, ...]
"""A seat's joint distribution over the 16 worlds of a game (its own original right)."""

SEATS = ("A", "B", "C", "D")


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


class Posterior:
    """One seat's posterior over the other seats' reliabilities, from the games it has seen.

    ``components`` maps a count vector — ``(right, wrong)`` per partner, in :attr:`partners` order — to the
    number of latent right/wrong assignments of the session's capsules that produce it.
    """

    def __init__(self, seat: str, prior: tuple[float, float] = (1.0, 1.0)) -> None:
        if prior[0] <= 0 or prior[1] <= 0:
            raise ValueError("the prior's alpha and beta must be > 0")
        self.seat = seat
        self.prior = (float(prior[0]), float(prior[1]))
        self.partners = tuple(s for s in SEATS if s != seat)
        self.components: dict[tuple[tuple[int, int], ...], int] = {}
        self.forget()

    def forget(self) -> None:
        """Back to the prior (memory ``none``: before every game)."""
        self.components = {tuple((0, 0) for _ in self.partners): 1}

    def add_game(self, owners: dict[int, str], facts: Sequence[Fact]) -> None:
        """Condition on one game's facts (``owners``: puzzle → seat)."""
        own = _own_puzzle(owners, self.seat)
        worlds, mentioned = allowed_worlds(own, facts)
        mentioned &= ~bit(own)
        steps = []  # per agreeing assignment of the mentioned capsules: (right, wrong) added per partner
        for world in sorted({w & mentioned for w in worlds}):
            step = [[0, 0] for _ in self.partners]
            for k in PUZZLES:
                if mentioned & bit(k):
                    step[self.partners.index(owners[k])][0 if world & bit(k) else 1] += 1
            steps.append(step)
        if steps == [[[0, 0] for _ in self.partners]]:
            return
        out: dict[tuple[tuple[int, int], ...], int] = {}
        for counts, n in self.components.items():
            for step in steps:
                key = tuple((r + dr, w + dw) for (r, w), (dr, dw) in zip(counts, step, strict=True))
                out[key] = out.get(key, 0) + n
        self.components = out

    def _weighted_means(self) -> list[tuple[float, tuple[float, ...]]]:
        """(mixture weight, posterior mean reliability per partner) per component."""
        a0, b0 = self.prior
        logs, means = [], []
        for counts, n in self.components.items():
            logs.append(math.log(n) + sum(_log_beta(a0 + r, b0 + w) for r, w in counts))
            means.append(tuple((a0 + r) / (a0 + b0 + r + w) for r, w in counts))
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        total = sum(weights)
        return [(w / total, m) for w, m in zip(weights, means, strict=True)]

    def reliability(self, seat: str) -> float:
        """Posterior mean of ``seat``'s probability of sealing a right answer."""
        i = self.partners.index(seat)
        return sum(w * m[i] for w, m in self._weighted_means())

    def view(self, owners: dict[int, str]) -> View:
        """The predictive joint of the next game's originals (``owners``: puzzle → seat), own one right."""
        own = _own_puzzle(owners, self.seat)
        others = [(bit(k), self.partners.index(owners[k])) for k in PUZZLES if k != own]
        out = [0.0] * len(WORLDS)
        for weight, means in self._weighted_means():
            for world in WORLDS:
                if not world & bit(own):
                    continue
                p = weight
                for b, i in others:
                    p *= means[i] if world & b else 1.0 - means[i]
                out[world] += p
        return tuple(out)


def _own_puzzle(owners: dict[int, str], seat: str) -> int:
    for k, s in owners.items():
        if s == seat:
            return k
    raise ValueError(f"seat {seat} owns no puzzle in {owners}")
