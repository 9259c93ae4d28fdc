"""The myopic baseline: minimise the immediate expected cost, ignoring the value of information."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.reliance.base import Choice, DecisionView, ReliancePolicy


class MyopicAgent(ReliancePolicy):
    """Chooses the first action (admissible order) with the least immediate expected cost under the exact
    posterior; states the exact success probability of what it relies on."""

    name: ClassVar[str] = "myopic"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": False, "uses_reference": True, "stochastic": False}

    def decide(self, view: DecisionView) -> Choice:
        action = view.reference.myopic[0]
        return Choice(action, view.p_exact.get(action), "least immediate expected cost", raw=action)
