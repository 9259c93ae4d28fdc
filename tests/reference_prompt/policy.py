"""A scripted "model" for the golden runs: its answer depends only on the request text, so the reference
code and trustsim play the same game exactly when they send the same requests.

It solves every puzzle correctly and plays a fixed plan that reaches every message kind of the reference:
verifications (agreeing, conflicting), no-volunteer eliminations, a correct and a wrong password, the
malformed-volunteer deaths (no capsule named, a question missing, a non-existent capsule), the keyword
fallback (no ``DECISION:`` line) and a decision line the reference reads as ``Pass``; a reflection names the
games ended in its context.
"""

from __future__ import annotations

import ast
import re
from typing import Any

_PUZZLE = re.compile(r"Puzzle: What is (-?\d+) ([+\-×÷]) (-?\d+)\?")
_SEAT = re.compile(r"You are Player (\w)")
_ROUND = re.compile(r"^- Round (\d+)$", re.MULTILINE)
_COINS = re.compile(r"^- Your coins: (\d+)$", re.MULTILINE)
_CAPS = re.compile(r"^  Q(\d): (.*)$", re.MULTILINE)
_GAME = re.compile(r"=== GAME (\d+) ENDED ===")
_REMAINING = re.compile(r"Remaining: (\[.*?\])")


def solve(text: str) -> str:
    m = _PUZZLE.search(text)
    if not m:
        return "0"
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    value = {"+": a + b, "-": a - b, "×": a * b, "÷": a // b if b else 0}[op]
    return str(value)


def _best(labels: list[str]) -> str:
    """The capsule with the most agents (the first on a tie)."""
    return max(labels, key=lambda lab: (lab.count("+"), -labels.index(lab)))


def decide(prompt: str) -> str:
    seat = _SEAT.search(prompt).group(1)  # type: ignore[union-attr]
    rnd = int(_ROUND.search(prompt).group(1))  # type: ignore[union-attr]
    coins = int(_COINS.search(prompt).group(1))  # type: ignore[union-attr]
    caps = {int(k): [s.strip() for s in v.split(",")] for k, v in _CAPS.findall(prompt)}
    game = len(_GAME.findall(prompt)) + 1  # games ended so far in the visible memory (a plan index only)
    context = prompt.split("Current situation:")[0]
    this_game = context.rsplit("Your starting coins:", 1)[-1]
    remaining = _REMAINING.findall(this_game)
    alive = ast.literal_eval(remaining[-1]) if remaining else ["A", "B", "C", "D"]
    volunteer = next((s for s in ("A", "B", "C") if s in alive), None)
    own = "ABCD".index(seat) + 1
    if rnd == 1:
        target = 4 if seat in ("A", "B") else None
        if seat == "B" and game % 3 == 2:
            target = 1  # a verification of another agent's puzzle
        if target is None or coins == 0 or target == own:
            return "DECISION: Pass\nREASONING: I wait for the verifications."
        if seat == "A" and game % 4 == 3:
            return f"I think I should verify: Q{target} before anything else."  # fallback, no DECISION line
        return f"DECISION: Verify: Q{target}\nREASONING: Q{target} is unverified."
    if seat != volunteer:
        if seat == "C" and game % 5 == 1:
            return "DECISION: Verify Q2\nREASONING: (no colon: the reference reads this as Pass)"
        return "DECISION: Pass\nREASONING: The first living agent volunteers."
    picks = {k: _best(v) for k, v in sorted(caps.items())}
    plan = game % 6
    if plan == 2 and rnd == 2:
        return "DECISION: Volunteer: all capsules look fine\nREASONING: malformed on purpose."
    if plan == 4 and rnd == 2:
        named = ", ".join(picks[k] for k in (1, 2, 4))
        return f"DECISION: Volunteer: {named}\nREASONING: Q3 left out on purpose."
    if plan == 5 and rnd == 2:
        named = ", ".join(picks[k] if k != 2 else "Q2-X" for k in sorted(picks))
        return f"DECISION: Volunteer: {named}\nREASONING: a capsule that does not exist."
    if plan == 0 and rnd == 2:
        named = ", ".join(v[0] for _, v in sorted(caps.items()))  # the owners' capsules (wrong if D is)
        return f"Thinking it over.\nDECISION: Volunteer: {named}\nREASONING: originals."
    named = ", ".join(picks[k] for k in sorted(picks))
    return f"DECISION: Volunteer: {named}\nREASONING: the most endorsed capsules."


def reply(body: dict[str, Any]) -> str:
    """The answer to an OpenAI-format chat request body."""
    text = str(body["messages"][-1]["content"])
    if "Your answer (just the answer" in text:
        return solve(text)
    if text.startswith("Based on the following short-term memory and previous reflection"):
        return reflect(text)
    return decide(text)


def reflect(prompt: str) -> str:
    """An evolving reflection that names the games ended in its context (so each one differs)."""
    ended = ", ".join(_GAME.findall(prompt)) or "none"
    return f"  Games seen ended: {ended}. Verify D's capsule before volunteering.  "
