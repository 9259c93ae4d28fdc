"""Seeded arithmetic puzzle generator: single/two-digit operands, integer answers 4–90.

Puzzles never repeat within a game (distinct texts and distinct answers) nor within a session: the caller
passes the session's used texts, as the reference study drew its question bank without replacement.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

from games.escape_room.types import Puzzle
from trustsim.errors import ConfigError

MIN_ANSWER = 4
MAX_ANSWER = 90
_MAX_REJECTIONS = 200  # rejected draws before drawing from the enumerated remainder instead


def _draw(rng: random.Random) -> tuple[str, int]:
    """One candidate puzzle: an operation, then its operands (answers outside 4–90 are rejected by the caller)."""
    op = rng.choice("+-*/")
    if op == "+":
        a = rng.randint(2, 60)
        b = rng.randint(2, MAX_ANSWER - a)
        return f"{a} + {b}", a + b
    if op == "-":
        a = rng.randint(MIN_ANSWER + 1, 99)
        b = rng.randint(1, a - MIN_ANSWER)
        return f"{a} - {b}", a - b
    if op == "*":
        a = rng.randint(2, 12)
        b = rng.randint(2, MAX_ANSWER // a)
        return f"{a} × {b}", a * b
    b = rng.randint(2, 9)
    answer = rng.randint(MIN_ANSWER, 99 // b)
    return f"{answer * b} ÷ {b}", answer


@cache
def all_puzzles() -> tuple[tuple[str, int], ...]:
    """Every (text, answer) the generator can produce with an answer in range, in a fixed order."""
    found: dict[str, int] = {}
    for a in range(2, 61):
        for b in range(2, max(MAX_ANSWER - a, 2) + 1):
            found[f"{a} + {b}"] = a + b
    for a in range(MIN_ANSWER + 1, 100):
        for b in range(1, a - MIN_ANSWER + 1):
            found[f"{a} - {b}"] = a - b
    for a in range(2, 13):
        for b in range(2, MAX_ANSWER // a + 1):
            found[f"{a} × {b}"] = a * b
    for b in range(2, 10):
        for answer in range(MIN_ANSWER, 99 // b + 1):
            found[f"{answer * b} ÷ {b}"] = answer
    return tuple((t, v) for t, v in found.items() if MIN_ANSWER <= v <= MAX_ANSWER)


@cache
def max_session_games(seats: int) -> int:
    """Games one session can always be dealt without repeating a puzzle.

    A game needs ``seats`` puzzles with distinct answers; after any ``g`` games, ``T - seats*g`` texts remain
    and at most ``M`` of them share an answer, so the next game is guaranteed while
    ``T - seats*g > (seats - 1) * M``.
    """
    pool = all_puzzles()
    per_answer = max(Counter(v for _, v in pool).values())
    return max(0, (len(pool) - (seats - 1) * per_answer - 1) // seats + 1)


def check_session_size(games: int, seats: int, key: str = "game.games") -> None:
    """Config error (at start) when a session needs more distinct puzzles than the generator supplies."""
    limit = max_session_games(seats)
    if games > limit:
        raise ConfigError(
            key,
            f"a session of {games} games needs {games * seats} distinct puzzles ({seats} per game, none "
            f"repeated in a session); the generator supplies {len(all_puzzles())} puzzles, enough for at most "
            f"{limit} games per session",
        )


def generate_puzzles(rng: random.Random, count: int, used: set[str] | None = None) -> list[Puzzle]:
    """Draw ``count`` distinct puzzles (distinct texts and answers), indexed 1..count, none of whose texts is
    in ``used``; the drawn texts are added to ``used`` (the session's puzzles so far)."""
    used = used if used is not None else set()
    texts: set[str] = set()
    answers: set[int] = set()
    puzzles: list[Puzzle] = []
    rejected = 0
    while len(puzzles) < count:
        text, answer = _draw(rng)
        if text in texts or text in used or answer in answers or not MIN_ANSWER <= answer <= MAX_ANSWER:
            rejected += 1
            if rejected < _MAX_REJECTIONS:
                continue
            remaining = [
                (t, v) for t, v in all_puzzles() if t not in texts and t not in used and v not in answers
            ]
            if not remaining:
                raise ConfigError(
                    "game.games", f"the puzzle generator ran out of unused puzzles after {len(used)} puzzles"
                )
            text, answer = rng.choice(remaining)
        texts.add(text)
        answers.add(answer)
        puzzles.append(Puzzle(len(puzzles) + 1, f"What is {text}?", answer))
    used.update(texts)
    return puzzles


def plausible_wrong_answer(rng: random.Random, answer: int) -> int:
    """A believable wrong value near the right one: never the right answer, never below 1."""
    while True:
        candidate = answer + rng.choice((-10, -3, -2, -1, 1, 2, 3, 10))
        if candidate != answer and candidate >= 1:
            return candidate
