"""What an arena job will ask before it runs: its decisions (the trust-card battery's plan)."""

from __future__ import annotations

from typing import Any

from trustsim.contract import agents_for


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
