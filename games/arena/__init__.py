"""The repeated cooperation arena: the iterated prisoner's dilemma with stated confidence (registers its GameSpec)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.arena.options import ArenaGame, uses_llm
from games.arena.plan import UNIT, count_decisions
from games.arena.reasoning import REASONING
from games.arena.summary import summarize
from games.arena.tables import MATCH_COLUMNS, MOVE_COLUMNS, PREDICTION_COLUMNS
from trustsim.contract import GameSpec, register_game

if TYPE_CHECKING:
    from trustsim.config import Draft
    from trustsim.job import JobContext


def _run(ctx: JobContext) -> None:
    from games.arena.job import run

    run(ctx)


def _check(draft: Draft) -> list[str]:
    from games.arena.job import check

    return check(draft)


SPEC = register_game(
    GameSpec(
        name="arena",
        options=ArenaGame,
        tables={"moves": MOVE_COLUMNS, "matches": MATCH_COLUMNS, "predictions": PREDICTION_COLUMNS},
        run=_run,
        summary=summarize,
        analysis="arena",
        count_decisions=count_decisions,
        unit=UNIT,
        reasoning=REASONING,
        check=_check,
        uses_llm=uses_llm,
        example=("+experiment=ipd", "agent=ipd_noisy_tit_for_tat", "game.rounds=5", "runs=2"),
        description="iterated prisoner's dilemma with stated P(opponent cooperates)",
    )
)
