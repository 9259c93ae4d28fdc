"""What a trust-game job will ask before it runs: its decisions (the trust-card battery's plan) and why its
length varies with the model's choices (preview's range)."""

from __future__ import annotations

from typing import Any

from trustsim.contract import GameLength


def count_decisions(cfg: dict[str, Any]) -> tuple[str, int, bool]:
    """(units, decisions of the roles the agent under test plays, upper bound when the horizon is unknown)."""
    game = cfg["game"]
    roles = sum(1 for r in ("trustor", "trustee") if game.get(r) in (None, cfg["agent"]["name"]))
    known = game.get("horizon", "known") == "known"
    rounds = int(game["rounds"]) if known else int(game["max_rounds"])
    runs = int(cfg["runs"])
    return (
        f"runs={runs} x {game['pairs']} pairs x {rounds} rounds",
        runs * int(game["pairs"]) * rounds * roles,
        not known,
    )


LENGTH = GameLength(
    note="a responder is asked only when the sender sent something: everything sent above, nothing sent below",
    skipped_by_shortest_play=lambda req: req.name == "trust_game_return",
)
