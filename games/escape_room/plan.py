"""What an escape-room job will ask before it runs: its decisions (the trust-card battery's plan) and why its
length varies with the model's choices (preview's range); its unit of play (a game: the run directory's event
unit, status's done/planned)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trustsim.contract import GameLength, PlayUnit
from trustsim.rundir.schema import EventUnit

if TYPE_CHECKING:
    from games.escape_room.options import EscapeRoomGame
    from trustsim.config import Validated

SEATS_UNDER_TEST = 3  # seats A, B, C; D is the scripted partner
DEFAULT_MAX_ROUNDS = 4


def games_per_run(valid: Validated) -> int:
    """Games one replicate session of a validated config plays: ``game.games``, else the schedule's length."""
    from games.escape_room.schedules import resolve_schedule

    schedule = valid.groups["schedule"]
    return resolve_schedule(schedule.name, schedule.pattern, valid.options.games)[1]


def count_decisions(valid: Validated) -> tuple[str, int, bool]:
    """(units, decisions of the seats under test, upper bound) of a validated config: every game played to
    its last round."""
    games = games_per_run(valid)
    rounds = valid.options.max_rounds or DEFAULT_MAX_ROUNDS
    runs = valid.root.runs
    return f"runs={runs} x {games} games (<= {rounds} rounds)", runs * games * rounds * SEATS_UNDER_TEST, True


def _skipped_by_shortest_play(req: Any) -> bool:
    """An escape in round 1 asks no verification call and no decision after round 1."""
    return req.purpose == "solve" or (req.purpose == "decision" and (req.round or 1) > 1)


def _upper_play(game: EscapeRoomGame) -> Any:
    """With ``game.verifier=llm`` every decision verifies (the last puzzle), so each asks its verification call
    too (a verification ends no game: without a volunteer a seat is still eliminated each round)."""
    from trustsim.preview.standin import STANDIN_TEXT, Play

    if game.verifier == "llm":
        return Play(
            prefer={"action": "verify"}, text={"decision": "DECISION: Verify: Q4\nREASONING: " + STANDIN_TEXT}
        )
    return Play()


STANDIN_ANSWERS = {
    "decision": "DECISION: Pass\nREASONING: preview stand-in answer",
    "solve": "0",
    "own_answer": "0",
}
"""Preview's stand-in answers to the LLM agent's free-text requests: a pass, and a number for a puzzle."""

SHORT_ANSWERS = frozenset({"solve", "own_answer"})
"""Purposes whose answer is a number: preview expects them as short as the stand-in's."""

LENGTH = GameLength(
    note="games end on an escape or when every seat is dead: full-length games (the stand-in passes every "
    "round; with game.verifier=llm it verifies) above, an escape in every game's first round below",
    skipped_by_shortest_play=_skipped_by_shortest_play,
    upper_play=_upper_play,
)


UNIT = PlayUnit(
    EventUnit(
        "game_start", "game_end", ("session", "game"), "game", "s{session}/{game}",
        {"*": "s{session}/{game}", "predictions": "{cluster}/{game}"},
    ),
    counted="games",
    per_run=games_per_run,
)  # fmt: skip
"""A game of a session, bracketed by ``game_start``/``game_end``; the manifest counts ``games``."""
