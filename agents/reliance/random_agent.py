"""The random baseline."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.reliance.base import Choice, DecisionView, ReliancePolicy


class RandomAgent(ReliancePolicy):
    """Chooses uniformly among the admissible actions and states a uniform random confidence (seeded)."""

    name: ClassVar[str] = "random"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": False, "uses_reference": False, "stochastic": True}

    def decide(self, view: DecisionView) -> Choice:
        action = view.actions[int(self.rng.integers(len(view.actions)))]
        return Choice(action, float(self.rng.uniform()), "uniformly random", raw=action)
