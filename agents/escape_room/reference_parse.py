"""Reading a model's answer the way the reference study did (cyjabc2020/Escape-room-v2 @ 74f0fd1).

Two steps, as in the reference:

1. :func:`extract_decision` (``games/escape_room.py:534-591``): the first line that starts with
   ``DECISION:`` (case-insensitive, after stripping); else a keyword/regex fallback (``verify: Q#``, a line
   with ``volunteer:`` naming Q1 and Q2); else ``Pass``. A decision that then does not start with
   ``verify:`` / ``volunteer:`` and is not exactly ``pass`` becomes ``Pass`` too (``defaulted``).
2. :func:`decision_action` (``games/moderator.py:41-60, 202-233``): how the moderator reads that decision
   string: a verification of the first ``Q<n>``, or a volunteer with the capsules its text names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from games.escape_room.types import Action

_VERIFY_FALLBACK = re.compile(r"verify:?\s*(q\d+)", re.IGNORECASE)  # escape_room.py:561
_TARGET = re.compile(r"Q(\d+)", re.IGNORECASE)  # moderator.py:206
_SELECTION = re.compile(r"(Q\d+)[-:\s]+(Q\d+-[A-Z](?:[+,][A-Z])*)")  # moderator.py:219
_SIMPLE_SELECTION = re.compile(r"(Q\d+-[A-Z](?:[+,][A-Z])*)")  # moderator.py:227
_SPLIT = re.compile(r"[+,]")


@dataclass(frozen=True, slots=True)
class ReferenceDecision:
    """The extracted decision line and whether the reference would have counted it as defaulted."""

    decision: str  # e.g. "Verify: Q2", "Pass", "Volunteer: Q1-A, Q2-B+C, ..."
    defaulted: bool  # no usable decision was found; the reference played Pass


def extract_decision(response: str) -> ReferenceDecision:
    """``_extract_decision`` (escape_room.py:534-591), same rules, same order."""
    defaulted = False
    decision: str | None = None
    lines = response.split("\n")
    for line in lines:
        line = line.strip()
        if line.upper().startswith("DECISION:"):
            decision = line[9:].strip()
            break
    if not decision:
        defaulted = True
        lower = response.lower()
        if "verify:" in lower or '"verify' in lower:
            match = _VERIFY_FALLBACK.search(response)
            if match:
                decision = f"Verify: {match.group(1).upper()}"
                defaulted = False
        elif "volunteer:" in lower:
            for line in lines:
                if "volunteer:" in line.lower():
                    decision = line.strip()
                    if "Q1" in decision and "Q2" in decision:
                        defaulted = False
                    break
        if not decision or defaulted:
            decision = "Pass"
            defaulted = True
    low = decision.lower()
    if not (low.startswith("verify:") or low.startswith("volunteer:") or low == "pass"):
        decision = "Pass"
        defaulted = True
    return ReferenceDecision(decision, defaulted)


def capsule_selections(decision: str) -> dict[str, str]:
    """``_parse_capsule_selections`` (moderator.py:211-233): question id → capsule label as written."""
    selections = {q: label for q, label in _SELECTION.findall(decision)}
    if not selections:
        for label in _SIMPLE_SELECTION.findall(decision):
            selections[label.split("-")[0]] = label
    return selections


def match_capsule(labels: Sequence[str], selected: str) -> str | None:
    """``_find_matching_capsule`` (moderator.py:235-303): the capsule (by its grown label, e.g. ``Q1-A+B``)
    a selection names: the first whose creator is among the selection's agents, else the first sharing any
    agent with it; None when none does."""
    if not selected or "-" not in selected:
        return None
    part = selected.split("-")[1]
    if not part:
        return None
    chosen = set(_SPLIT.split(part))
    for label in labels:
        agents = _SPLIT.split(label.split("-")[1]) if "-" in label else []
        if agents and agents[0] in chosen:
            return label
    for label in labels:
        named = set(_SPLIT.split(label.split("-")[1])) if "-" in label else set()
        if chosen & named:
            return label
    return None


def decision_action(
    decision: str,
    num_questions: int,
    capsules: Mapping[int, Sequence[tuple[str, str]]] | None = None,
) -> Action:
    """The action the reference moderator takes from a decision string.

    ``capsules`` maps a question to its capsules as ``(trustsim label, grown label)`` pairs (the state the
    decision was made in). A selection that names an existing capsule is translated to its trustsim label;
    any other is kept as written (the engine's malformed-volunteer rule then kills the volunteer, as the
    reference did). A volunteer naming nothing gets an empty password.
    """
    low = decision.lower()
    if "verify:" in low or '"verify' in low:
        match = _TARGET.search(decision)
        if match and 1 <= int(match.group(1)) <= num_questions:
            return Action.verify(int(match.group(1)))
    if "volunteer:" in low or decision.strip().lower().startswith("volunteer"):
        password: dict[int, str] = {}
        for qid, label in capsule_selections(decision).items():
            k = int(qid[1:])
            if not 1 <= k <= num_questions:
                continue  # the reference reads only its own question ids
            password[k] = label
            if capsules and k in capsules:
                grown = [g for _, g in capsules[k]]
                hit = match_capsule(grown, label)
                if hit is not None:
                    password[k] = next(t for t, g in capsules[k] if g == hit)
        return Action.volunteer(password)
    return Action.pass_()


_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1000000,
}  # fmt: skip  # utils/answer_checker.py:30-37
_NUMBER = re.compile(r"-?\d+\.?\d*")


def solve_answer(text: str) -> int | None:
    """A solve answer as the reference compared it (escape_room.py:528, answer_checker.py:7-55): stripped of
    quotes, currency signs, commas and number words, the first number; None when there is none or it is not
    within 0.01 of an integer."""
    text = text.strip().strip('"').strip("'").strip().lower()
    text = re.sub(r"[\$£€¥]", "", text).replace(",", "")
    for word, num in _WORDS.items():
        if word in text:
            text = text.replace(word, str(num))
    match = _NUMBER.search(text[:1000])
    if not match:
        return None
    try:
        value = float(match.group(0))
    except ValueError:
        return None
    nearest = round(value)
    return int(nearest) if abs(value - nearest) <= 0.01 else None
