"""The trust (investment) game of Berg, Dickhaut & McCabe (1995): send, multiply, return.

Registered through the game contract (trustsim/contract.py); specs/trust_game.md, docs/trust_game.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.trust_game.options import TrustGameOptions
from games.trust_game.plan import LENGTH, UNIT, count_decisions
from games.trust_game.summary import summarize
from games.trust_game.tables import TABLES
from trustsim.contract import GameSpec, register_game

if TYPE_CHECKING:
    from games.trust_game.roles import RoleSpec
    from games.trust_game.types import Role
    from trustsim.config import Draft
    from trustsim.job import JobContext


def _run(ctx: JobContext) -> None:
    from games.trust_game.job import run

    run(ctx)


def _roles(draft: Draft) -> dict[Role, RoleSpec]:
    from games.trust_game.roles import role_specs

    return role_specs(draft.options, draft.agent, draft.agent_params)


def _check(draft: Draft) -> list[str]:
    """Cross-field rules: both roles' agents and parameters, the population table, useless options."""
    from games.trust_game.roles import pin_role_models

    roles = _roles(draft)
    for spec in roles.values():
        spec.build()
    options: TrustGameOptions = pin_role_models(draft.options, roles)
    draft.options = options
    options.population()
    warnings = []
    if options.horizon == "known":
        for key in ("continue_p", "max_rounds"):
            if getattr(options, key) != getattr(TrustGameOptions, key):
                warnings.append(f"game.{key} has no effect with game.horizon=known")
    if options.population_table and options.history != "population":
        warnings.append("game.population_table has no effect unless game.history=population")
    return warnings


def _uses_llm(draft: Draft) -> bool:
    return any(spec.uses_llm for spec in _roles(draft).values())


SPEC = register_game(
    GameSpec(
        name="trust_game",
        options=TrustGameOptions,
        tables=TABLES,
        run=_run,
        summary=summarize,
        analysis="trust_game",
        count_decisions=count_decisions,
        unit=UNIT,
        length=LENGTH,
        check=_check,
        uses_llm=_uses_llm,
        example=("game=trust_game", "agent=tg_reciprocal", "game.pairs=4", "game.rounds=3"),
        description="Berg (1995) investment game: send, multiply by k, return; one-shot or repeated",
    )
)
