"""The escape-room survival game (costly verification): registers its :class:`~trustsim.contract.GameSpec`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.escape_room.options import (
    EscapeRoomGame,
    MemoryOptions,
    ScheduleOptions,
    check,
    run_name,
    uses_llm,
)
from games.escape_room.plan import LENGTH, SHORT_ANSWERS, STANDIN_ANSWERS, UNIT, count_decisions
from games.escape_room.reasoning import REASONING
from games.escape_room.summary import summarize
from games.escape_room.tables import AGENT_GAME_COLUMNS, DECISION_COLUMNS, GAME_COLUMNS, PREDICTION_COLUMNS
from trustsim.contract import GameSpec, register_game

if TYPE_CHECKING:
    from trustsim.job import JobContext


def _run(ctx: JobContext) -> None:
    from games.escape_room.job import run

    run(ctx)


SPEC = register_game(
    GameSpec(
        name="escape_room",
        options=EscapeRoomGame,
        tables={
            "decisions": DECISION_COLUMNS,
            "games": GAME_COLUMNS,
            "agent_games": AGENT_GAME_COLUMNS,
            "predictions": PREDICTION_COLUMNS,
        },
        run=_run,
        summary=summarize,
        analysis="trust",
        count_decisions=count_decisions,
        unit=UNIT,
        reasoning=REASONING,
        length=LENGTH,
        standin_text=STANDIN_ANSWERS,
        short_answers=SHORT_ANSWERS,
        check=check,
        uses_llm=uses_llm,
        run_name=run_name,
        groups={"memory": MemoryOptions, "schedule": ScheduleOptions},
        example=("game=escape_room", "agent=bayes", "schedule=mid2strike", "game.games=3", "runs=2"),
        description="four seats, a scripted partner with a failure schedule; verifying costs a coin",
    )
)
