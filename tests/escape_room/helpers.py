"""Builders for hand-made escape-room states."""

from __future__ import annotations

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
