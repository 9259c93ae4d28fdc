"""Simple offline escape-room policies (one small class each)."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.escape_room.base import EscapeRoomPolicy
from agents.escape_room.views import best_password, unverified_puzzles
from games.escape_room.types import Action, Decision, Observation


class AlwaysVerify(EscapeRoomPolicy):
    """Verifies an unverified puzzle (chosen at random) while it has coins; volunteers when none is left."""

    name = "always_verify"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": True, "uses_llm": False, "memory": "none"}

    def decide(self, obs: Observation) -> Decision:
        todo = unverified_puzzles(obs)
        if todo and obs.my_coins > 0:
            return Decision(Action.verify(int(self.rng.choice(todo))))
        return Decision(Action.volunteer(best_password(obs)))


class NeverVerify(EscapeRoomPolicy):
    """Trusts every capsule: volunteers with the trusted capsules every round."""

    name = "never_verify"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "uses_llm": False, "memory": "none"}

    def decide(self, obs: Observation) -> Decision:
        return Decision(Action.volunteer(best_password(obs)))


class Consensus(EscapeRoomPolicy):
    """Verifies the first unendorsed puzzle; volunteers once every puzzle has a verified capsule (or no coins)."""

    name = "consensus"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "uses_llm": False, "memory": "none"}

    def decide(self, obs: Observation) -> Decision:
        todo = unverified_puzzles(obs)
        if todo and obs.my_coins > 0:
            return Decision(Action.verify(todo[0]))
        return Decision(Action.volunteer(best_password(obs)))


class RandomPolicy(EscapeRoomPolicy):
    """Picks pass / verify / volunteer with the given weights among legal actions (verify needs a coin)."""

    name = "random"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": True, "uses_llm": False, "memory": "none"}

    def __init__(
        self, memory: str = "none", p_pass: float = 1 / 3, p_verify: float = 1 / 3, p_volunteer: float = 1 / 3
    ) -> None:
        super().__init__(memory=memory)
        weights = [p_pass, p_verify, p_volunteer]
        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise ValueError("p_pass, p_verify, p_volunteer must be >= 0 and not all 0")
        self.weights = [w / sum(weights) for w in weights]

    def decide(self, obs: Observation) -> Decision:
        kind = ["pass", "verify", "volunteer"][int(self.rng.choice(3, p=self.weights))]
        targets = [k for k in sorted(obs.capsules) if obs.owners[k] != obs.seat]
        if kind == "verify" and obs.my_coins > 0:
            return Decision(Action.verify(int(self.rng.choice(targets))))
        if kind == "volunteer":
            return Decision(Action.volunteer(best_password(obs)))
        return Decision(Action.pass_())
