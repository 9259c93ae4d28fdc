"""Seeded arithmetic puzzle generator (single/two-digit operands, integer answers 4–90, no repeats in a game)."""

from __future__ import annotations

import random

from games.escape_room.types import Puzzle

MIN_ANSWER = 4
MAX_ANSWER = 90


def _draw(rng: random.Random) -> tuple[str, int]:
    op = rng.choice("+-*/")
    if op == "+":
        a = rng.randint(2, 60)
        b = rng.randint(2, MAX_ANSWER - a) if a <= MAX_ANSWER - 2 else 2
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


def generate_puzzles(rng: random.Random, count: int) -> list[Puzzle]:
    """Draw ``count`` distinct puzzles (distinct texts and distinct answers), indexed 1..count."""
    texts: set[str] = set()
    answers: set[int] = set()
    puzzles: list[Puzzle] = []
    while len(puzzles) < count:
        text, answer = _draw(rng)
        if text in texts or answer in answers or not MIN_ANSWER <= answer <= MAX_ANSWER:
            continue
        texts.add(text)
        answers.add(answer)
        puzzles.append(Puzzle(index=len(puzzles) + 1, text=f"What is {text}?", answer=answer))
    return puzzles


def plausible_wrong_answer(rng: random.Random, answer: int) -> int:
    """A believable wrong value near the right one: never the right answer, never below 1."""
    while True:
        candidate = answer + rng.choice((-10, -3, -2, -1, 1, 2, 3, 10))
        if candidate != answer and candidate >= 1:
            return candidate
