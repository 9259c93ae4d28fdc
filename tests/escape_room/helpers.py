"""Builders for hand-made escape-room states."""

from __future__ import annotations

import numpy as np

from agents.escape_room.base import EscapeRoomPolicy, Services
from games.escape_room.options import EscapeRoomOptions
from games.escape_room.rules import GameState, new_game
from games.escape_room.types import Puzzle

OWNERS = {1: "A", 2: "B", 3: "C", 4: "D"}
PUZZLES = [
    Puzzle(1, "What is 2 + 3?", 5),
    Puzzle(2, "What is 4 + 4?", 8),
    Puzzle(3, "What is 3 × 3?", 9),
    Puzzle(4, "What is 6 + 6?", 12),
]


def make_state(d_value: int = 12, coins: int = 4, max_rounds: int = 4) -> GameState:
    sealed = {1: 5, 2: 8, 3: 9, 4: d_value}
    return new_game(PUZZLES, OWNERS, sealed, coins=coins, max_rounds=max_rounds)


def originals() -> dict[int, str]:
    return {k: f"Q{k}-{s}" for k, s in OWNERS.items()}


def make_options(
    schedule: str = "T", memory: str = "none", coins: int = 4, max_rounds: int = 4
) -> EscapeRoomOptions:
    """Options for driving the Mesa model directly; ``schedule`` is D's T/F pattern, one letter per game."""
    d_correct = tuple(c == "T" for c in schedule)
    return EscapeRoomOptions(
        games=len(d_correct),
        d_correct=d_correct,
        schedule="test",
        memory=memory,
        coins=coins,
        max_rounds=max_rounds,
        partner_slot="fixed",
        reveal_after_game=False,
        own_answer="exact",
        verifier="exact",
        agent="test",
    )


def start_all(policies: dict[str, EscapeRoomPolicy], seed: int = 0) -> None:
    """Start a session for every seat with its own seeded generator."""
    for i, (seat, policy) in enumerate(policies.items()):
        policy.start_session(seat, np.random.default_rng([seed, i]), Services())
