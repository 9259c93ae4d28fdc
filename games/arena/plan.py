"""What an arena job will ask before it runs: its decisions (the trust-card battery's plan) and its unit of
play (a match: the run directory's event unit, status's done/planned)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.arena.options import arena_options
from trustsim.contract import PlayUnit, agents_for
from trustsim.rundir.schema import EventUnit

if TYPE_CHECKING:
    from trustsim.config import Validated


def count_decisions(valid: Validated) -> tuple[str, int, bool]:
    """(units, decisions of the agent under test, upper bound when the horizon is unknown: rounds capped) of
    a validated config."""
    game = valid.options
    rounds = game.rounds
    runs = valid.root.runs
    self_play = game.self_play
    if game.mode == "tournament":
        players = game.players or [n for n, a in agents_for(valid.game.name).items() if not a.uses_llm]
        matches = len(players) + self_play
        decisions = runs * (len(players) * rounds + (2 * rounds if self_play else 0))
    else:
        matches, decisions = 1, runs * rounds
    unknown = game.horizon == "unknown"
    cap = " (cap)" if unknown else ""
    return f"runs={runs} x {matches} matches x {rounds} rounds{cap}", decisions, unknown


def matches_per_run(valid: Validated) -> int:
    """Matches one run of a validated config plays: one in match mode, a tournament's round robin."""
    return len(arena_options(valid.options, valid.agent, valid.agent_params).pairings())


UNIT = PlayUnit(
    EventUnit(
        "match_start", "match_end", ("match",), "match", "{match}",
        {"moves": "{match}", "matches": "{match}", "predictions": "{cluster}"},
    ),
    counted="matches",
    per_run=matches_per_run,
)  # fmt: skip
"""A match, bracketed by ``match_start``/``match_end``; the manifest counts ``matches``."""
