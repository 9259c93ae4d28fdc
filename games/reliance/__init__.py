"""Sequential reliance scenarios with an exact Bayes-optimal reference: registers its GameSpec."""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.reliance.options import RelianceGame
from games.reliance.plan import UNIT, count_decisions
from games.reliance.summary import summarize
from games.reliance.tables import PREDICTION_COLUMNS, SCENARIO_COLUMNS, STAGE_COLUMNS
from trustsim.contract import GameSpec, register_game

if TYPE_CHECKING:
    from trustsim.config import Draft
    from trustsim.job import JobContext


def _run(ctx: JobContext) -> None:
    from games.reliance.job import run

    run(ctx)


def _check(draft: Draft) -> list[str]:
    from games.reliance.job import check

    return check(draft)


SPEC = register_game(
    GameSpec(
        name="reliance",
        options=RelianceGame,
        tables={"stages": STAGE_COLUMNS, "scenarios": SCENARIO_COLUMNS, "predictions": PREDICTION_COLUMNS},
        run=_run,
        summary=summarize,
        analysis="reliance",
        count_decisions=count_decisions,
        unit=UNIT,
        check=_check,
        example=("+experiment=reliance", "agent=oracle", "game.limit=3", "runs=2"),
        description="three-stage reliance decisions scored against an exact Bayes-optimal oracle",
    )
)
