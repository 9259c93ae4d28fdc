"""What an extractor reads: one reasoning text, the event it is about, and the outcome to score it against."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """One reasoning text with the prediction-row fields it will produce.

    Attributes:
        text: the reasoning (free text written by the player).
        question: the event whose probability is asked for, in words (shown to the extractor).
        outcome: 1 if the event happened, 0 if not.
        row: the other predictions.csv fields (run_id, game_type, cluster, model, agent, memory, schedule,
            subject, subject_kind, game, round, item).
    """

    text: str
    question: str
    outcome: int
    row: dict[str, object]
