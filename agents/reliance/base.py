"""Re-export of the reliance policy interface, which the game owns (``games.reliance.policy``)."""

from games.reliance.policy import Choice, DecisionView, ReliancePolicy

__all__ = ["Choice", "DecisionView", "ReliancePolicy"]
