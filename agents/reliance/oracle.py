"""The exact Bayes-optimal reference policy."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.reliance.base import Choice, DecisionView, ReliancePolicy


class OracleAgent(ReliancePolicy):
    """Chooses the first optimal action (admissible order); states the exact success probability."""

    name: ClassVar[str] = "oracle"
    classifier: ClassVar[dict[str, Any]] = {"uses_llm": False, "uses_reference": True, "stochastic": False}

    def decide(self, view: DecisionView) -> Choice:
        action = view.reference.optimal[0]
        return Choice(action, view.p_exact.get(action), "exact Bayes-optimal choice", raw=action)
