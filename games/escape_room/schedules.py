"""Failure schedules of the scripted partner D (T = correct, F = wrong), indexed by game."""

from __future__ import annotations

from collections.abc import Sequence

from trustsim.errors import ConfigError

SCHEDULES: dict[str, str] = {
    "smooth": "T" * 11,
    "1strike": "F" + "T" * 10,
    "2strike": "FF" + "T" * 9,
    "3strike": "FFF" + "T" * 8,
    "mid2strike": "TTTFF" + "T" * 6,
    "recur": "FTTTF" + "T" * 6,
    "anchor": "T" * 10,
    "anchor_dwrong": "F" * 10,
}


def parse_pattern(pattern: str | Sequence[bool | str | int], key: str = "schedule.pattern") -> list[bool]:
    """Turn ``"TTF"``, ``[true, false]``, ``["T", "F"]`` or ``[1, 0]`` into a list of booleans."""
    items: Sequence[object] = list(pattern) if isinstance(pattern, str) else pattern
    out: list[bool] = []
    for i, item in enumerate(items):
        if isinstance(item, bool):
            out.append(item)
        elif isinstance(item, int) and item in (0, 1):
            out.append(bool(item))
        elif isinstance(item, str) and item.upper() in ("T", "F"):
            out.append(item.upper() == "T")
        else:
            raise ConfigError(key, f"entry {i} is {item!r}; use T/F, true/false or 1/0")
    if not out:
        raise ConfigError(key, "the schedule is empty")
    return out


def resolve_schedule(name: str, pattern: object, games: int | None) -> tuple[list[bool], int]:
    """Return (D-correct flags, number of games). A schedule shorter than the games is an error."""
    if pattern is None:
        if name not in SCHEDULES:
            known = ", ".join(sorted(SCHEDULES))
            raise ConfigError(
                "schedule.name", f"unknown schedule {name!r} without a pattern (known: {known})"
            )
        pattern = SCHEDULES[name]
    if not isinstance(pattern, str | list | tuple):
        raise ConfigError("schedule.pattern", f"expected a string or a list, got {pattern!r}")
    flags = parse_pattern(pattern)
    n_games = len(flags) if games is None else games
    if n_games < 1:
        raise ConfigError("game.games", f"must be >= 1 (got {n_games})")
    if len(flags) < n_games:
        raise ConfigError(
            "schedule.pattern",
            f"schedule {name!r} has {len(flags)} entries but game.games={n_games}; "
            "give one T/F per game (the reference silently made D wrong here)",
        )
    return flags[:n_games], n_games
