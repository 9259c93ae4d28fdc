"""Name a partner-correctness schedule from its per-game pattern (D correct = T, wrong = F)."""

from __future__ import annotations

from collections.abc import Sequence

# Prefix patterns of the named schedules; every game after the prefix is T.
_PREFIXES: dict[str, str] = {
    "smooth": "",
    "1strike": "F",
    "2strike": "FF",
    "3strike": "FFF",
    "mid2strike": "TTTFF",
    "recur": "FTTTF",
}

SCHEDULE_ORDER = ("anchor", "anchor_dwrong", "smooth", "1strike", "2strike", "3strike", "mid2strike", "recur")
"""Display order of the known schedules (others sort after, alphabetically)."""

MULTI_FAILURE = ("2strike", "3strike", "mid2strike", "recur")
"""Schedules with more than one failure game (the recovery figure)."""


def pattern(d_correct: Sequence[bool]) -> str:
    """``[True, False]`` -> ``"TF"``."""
    return "".join("T" if bool(x) else "F" for x in d_correct)


def infer_schedule(d_correct: Sequence[bool], *, memoryless: bool) -> str:
    """The schedule name of a per-game correctness sequence.

    Memoryless runs of all-T (all-F) games are the ``anchor`` (``anchor_dwrong``) cells. With memory, the
    named schedules are matched on their failure prefix followed only by T games (shorter runs match when
    they are a prefix of the schedule). Anything else is ``custom:<pattern>``.

    Args:
        d_correct: Partner correctness per game, in play order.
        memoryless: True when no information crosses games.

    Raises:
        ValueError: On an empty sequence.
    """
    pat = pattern(d_correct)
    if not pat:
        raise ValueError("cannot infer a schedule from zero games")
    if memoryless:
        if set(pat) == {"T"}:
            return "anchor"
        if set(pat) == {"F"}:
            return "anchor_dwrong"
        return f"custom:{pat}"
    # Longest prefix first so that "FF..." is 2strike, not 1strike.
    for name, prefix in sorted(_PREFIXES.items(), key=lambda kv: -len(kv[1])):
        full = prefix + "T" * max(0, len(pat) - len(prefix))
        if pat == full[: len(pat)] and len(pat) >= len(prefix):
            return name
    return f"custom:{pat}"


def schedule_sort_key(name: str) -> tuple[int, str]:
    """Sort key putting known schedules in :data:`SCHEDULE_ORDER`."""
    try:
        return (SCHEDULE_ORDER.index(name), name)
    except ValueError:
        return (len(SCHEDULE_ORDER), name)
