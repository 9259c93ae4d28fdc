"""What a trust-game job will ask before it runs: its decisions (the trust-card battery's plan) and why its
length varies with the model's choices (preview's range); its unit of play (a session of pairs: the run
directory's event unit, status's done/planned)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trustsim.contract import GameLength, PlayUnit
from trustsim.rundir.schema import EventUnit

if TYPE_CHECKING:
    from trustsim.config import Validated


def count_decisions(valid: Validated) -> tuple[str, int, bool]:
    """(units, decisions of the roles the agent under test plays, upper bound when the horizon is unknown) of
    a validated config."""
    game = valid.options
    roles = sum(1 for role in (game.trustor, game.trustee) if role in (None, valid.agent.name))
    known = game.horizon == "known"
    rounds = game.rounds if known else game.max_rounds
    runs = valid.root.runs
    return (
        f"runs={runs} x {game.pairs} pairs x {rounds} rounds",
        runs * game.pairs * rounds * roles,
        not known,
    )


LENGTH = GameLength(
    note="a responder is asked only when the sender sent something: everything sent above, nothing sent below",
    skipped_by_shortest_play=lambda req: req.name == "trust_game_return",
)


def pairs_per_session(valid: Validated) -> int:
    """Pairs one session of a validated config plays (``game.pairs``); a session ends with one ``session_end``
    event for all."""
    return valid.options.pairs


UNIT = PlayUnit(
    EventUnit(
        "session_start", "session_end", ("session",), "session", "s{session}", {"exchanges": "s{session}"},
    ),
    counted="pairs",
    per_run=pairs_per_session,
    per_end=pairs_per_session,
)  # fmt: skip
"""A session (every pair of one replicate), bracketed by ``session_start``/``session_end``; status counts
``pairs``: each ended session completes ``game.pairs`` of them."""
