"""A two-player public-goods game, added the way docs/architecture.md ("Adding a game") says: this package (the
game, its players, its analysis declaration) and ``tests/public_goods/conf``, nothing else. It registers through
the ``trustsim.plugins`` entry point of ``tests/public_goods/plugin/trustsim_public_goods-0.1.dist-info`` and
finds its configs through Hydra's search path (its example job names it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from public_goods.job import PREDICTIONS, ROUNDS
from public_goods.policy import Conditional, FreeRider, Full
from trustsim.config import Draft
from trustsim.contract import GameSpec, PlayUnit, register_agent, register_game
from trustsim.rundir import EventUnit, read_manifest
from trustsim.schema import opt
from trustsim.summary import Family, number, read_rows

GAME = "public_goods"
CONF = Path(__file__).resolve().parents[2] / "conf"


@dataclass(frozen=True)
class PublicGoodsOptions:
    """Schema of the ``game`` group (``tests/public_goods/conf/game/public_goods.yaml``)."""

    groups: int = opt(4, min=1, world=True)
    rounds: int = opt(5, min=1, world=True)
    endowment: int = opt(10, min=1, world=True)
    multiplier: float = opt(1.5, min=1.0, max=2.0, world=True)  # above 2, contributing everything pays


def _run(ctx: Any) -> None:
    from public_goods.job import run

    run(ctx)


def _check(draft: Draft) -> list[str]:
    """Cross-field rules: the agent's parameters build a player."""
    draft.agent.build(draft.agent_params)  # a refusal names the key
    return []


def _count_decisions(valid: Any) -> tuple[str, int, bool]:
    o, runs = valid.options, valid.root.runs
    return f"runs={runs} x {o.groups} groups x {o.rounds} rounds", runs * o.groups * o.rounds * 2, False


def _summary(run_dir: Path) -> Family:
    rows = read_rows(run_dir, "rounds")
    endowment = read_manifest(run_dir)["config"]["game"]["endowment"]
    share = [(number(r.get("contribution")) or 0.0) / endowment for r in rows]
    fam = Family(f"public goods, {len({(r['session'], r['group']) for r in rows})} groups")
    mean = sum(share) / len(share) if share else 0.0
    fam.lines.append(f"mean contribution {mean:.0%} of the endowment")
    fam.short = f"contribution {mean:.0%}"
    return fam


UNIT = PlayUnit(
    EventUnit(
        "group_start", "group_end", ("session", "group"), "group", "s{session}/g{group}",
        {"rounds": "s{session}/g{group}", "predictions": "{cluster}"},
    ),
    counted="groups",
    per_run=lambda valid: valid.options.groups,
)  # fmt: skip

SPEC = register_game(
    GameSpec(
        name=GAME,
        options=PublicGoodsOptions,
        tables={"rounds": ROUNDS, "predictions": PREDICTIONS},
        run=_run,
        check=_check,
        unit=UNIT,
        count_decisions=_count_decisions,
        summary=_summary,
        example=("game=public_goods", "agent=pg_conditional", "runs=2", f"hydra.searchpath=[file://{CONF}]"),
        description="two players contribute to a pot that is multiplied and split equally",
    )
)
for _player in (Full, FreeRider, Conditional):
    register_agent(GAME, _player.name, _player, description=(_player.__doc__ or "").split("\n")[0])
