"""What an arena job will ask before it runs: its decisions (the trust-card battery's plan) and its unit of
play (a match: the run directory's event unit, status's done/planned)."""

from __future__ import annotations

from typing import Any

from trustsim.contract import PlayUnit, agents_for
from trustsim.rundir.schema import EventUnit


def count_decisions(cfg: dict[str, Any]) -> tuple[str, int, bool]:
    """(units, decisions of the agent under test, upper bound when the horizon is unknown: rounds capped)."""
    game = cfg["game"]
    rounds = int(game["rounds"])
    runs = int(cfg["runs"])
    self_play = bool(game.get("self_play"))
    if game.get("mode") == "tournament":
        players = game.get("players") or [n for n, a in agents_for("arena").items() if not a.uses_llm]
        matches = len(players) + self_play
        decisions = runs * (len(players) * rounds + (2 * rounds if self_play else 0))
    else:
        matches, decisions = 1, runs * rounds
    unknown = game.get("horizon") == "unknown"
    cap = " (cap)" if unknown else ""
    return f"runs={runs} x {matches} matches x {rounds} rounds{cap}", decisions, unknown


def matches_per_run(config: dict[str, Any], event: dict[str, Any]) -> int | None:
    """One match per run in match mode; a tournament's pairings depend on the field's rules (None: known
    only once the job is complete)."""
    game = config.get("game")
    return 1 if (game if isinstance(game, dict) else {}).get("mode", "match") == "match" else None


UNIT = PlayUnit(
    EventUnit(
        "match_start", "match_end", ("match",), "match", "{match}",
        {"moves": "{match}", "matches": "{match}", "predictions": "{cluster}"},
    ),
    counted="matches",
    per_run=matches_per_run,
)  # fmt: skip
"""A match, bracketed by ``match_start``/``match_end``; the manifest counts ``matches``."""
