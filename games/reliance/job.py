"""Run a reliance job: every selected item (scenario or pair side) × ``runs`` replicate sessions."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from games.reliance.items import Item, select_items
from games.reliance.library import Library, default_library, quality_gates
from games.reliance.model import RelianceModel, Services
from games.reliance.options import RelianceGame
from games.reliance.policy import ReliancePolicy
from games.reliance.tables import PREDICTION_COLUMNS, SCENARIO_COLUMNS, STAGE_COLUMNS
from trustsim.errors import ConfigError
from trustsim.job import JobContext
from trustsim.llm.config import ModelConfig
from trustsim.seeding import Seeder

if TYPE_CHECKING:
    from trustsim.config import Draft


def _make_policy(ctx: JobContext) -> ReliancePolicy:
    policy = ctx.agent.build(ctx.agent_params)
    if not isinstance(policy, ReliancePolicy):
        raise ConfigError("agent", f"agent {ctx.agent.name!r} is not a ReliancePolicy")
    return policy


def check(draft: Draft) -> list[str]:
    """Cross-field rules: the selection filters must select at least one item."""
    select_items(default_library(), draft.options)
    return []


def feedback_seeder(ctx: JobContext) -> Seeder:
    """Shared feedback draws: a world branch of the seed tree (the world key is the root seed only, so
    agent, model and subset do not change them)."""
    return ctx.seeds.seeder("feedback")


def _model_name(model: ModelConfig | None, policy: ReliancePolicy) -> str:
    if not policy.classifier.get("uses_llm"):
        return policy.model_name
    return model.name if model is not None else "unknown"


def scenario_row(
    lib: Library, base: dict[str, Any], item: Item, index: int, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    sol = lib.solution(item.scenario.id)
    return {
        **base,
        "item": item.id,
        "item_index": index,
        "scenario": item.scenario.id,
        "blueprint": item.scenario.blueprint,
        "category": item.scenario.category,
        "process": item.scenario.process,
        "pair": item.pair.id if item.pair else None,
        "pair_side": item.side or None,
        "decisions": len(rows),
        "stages_reached": sum(r["valid"] for r in rows),
        "n_stages": 1 if item.pair else len(item.scenario.stages),
        "all_optimal": bool(rows)
        and all(r["optimal"] for r in rows)
        and len(rows) == (1 if item.pair else len(item.scenario.stages)),
        "error": any(not r["valid"] for r in rows),
        "total_cost": sum(r["cost"] or 0.0 for r in rows),
        "v_star_root": sol.root.v,
        "adaptation_value": sol.adaptation_value(),
    }


def prediction_rows(
    base: dict[str, Any], item: Item, index: int, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Calibration contract: one row per decision whose action carries out a job."""
    out = []
    scn = item.scenario
    for r in rows:
        if not r["valid"] or r["p_exact"] is None:
            continue
        a = scn.actions[r["action"]]
        out.append(
            {
                "run_id": base["run_id"],
                "game_type": "reliance",
                "cluster": f"s{base['session']}",
                "model": base["model"],
                "agent": base["agent"],
                "memory": None,
                "schedule": None,
                "subject": "+".join(a.rely) if a.rely else "backup",
                "subject_kind": "channel",
                "game": index,
                "round": r["stage"],
                "p": r["confidence"],
                "outcome": None if r["outcome"] is None else int(bool(r["outcome"])),
                "p_exact": r["p_exact"],
                "source": "native",
                "item": item.id,
            }
        )
    return out


async def _play_item(
    ctx: JobContext,
    lib: Library,
    opts: RelianceGame,
    item: Item,
    index: int,
    session: int,
    base: dict[str, Any],
    services: Services,
    feedback: Seeder,
) -> list[dict[str, Any]]:
    model = RelianceModel(
        seed=ctx.seeds.seed("session", session, "item", item.id),
        agent_seed=ctx.seeds.seed("session", session, "agent", "item", item.id),
        item=item,
        item_index=index,
        solution=lib.solution(item.scenario.id),
        policy=_make_policy(ctx),
        feedback=feedback,
        show_posterior=opts.show_posterior,
        services=services,
        base_row=base,
        recorder=ctx.recorder,
    )
    ctx.recorder.event(
        "scenario_start", session=session, item=item.id, scenario=item.scenario.id, set=item.set
    )
    rows = await model.play()
    ctx.recorder.event(
        "scenario_end",
        session=session,
        item=item.id,
        decisions=len(rows),
        error=any(not r["valid"] for r in rows),
    )
    return rows


def run(ctx: JobContext) -> None:
    """The game runner called by the engine."""
    opts: RelianceGame = ctx.options
    lib = default_library()
    items = select_items(lib, opts)
    probe = _make_policy(ctx)
    model_name = _model_name(ctx.model, probe)
    ctx.set_cell(agent=ctx.agent.name, model=model_name, set=opts.set, show_posterior=opts.show_posterior)
    writers = {
        "stages": ctx.recorder.table("stages", STAGE_COLUMNS),
        "scenarios": ctx.recorder.table("scenarios", SCENARIO_COLUMNS),
        "predictions": ctx.recorder.table("predictions", PREDICTION_COLUMNS),
    }
    feedback = feedback_seeder(ctx)
    run_id = ctx.run_id
    ctx.recorder.event("library", items=len(items), **quality_gates(lib))
    bar = ctx.progress(ctx.runs * len(items), f"reliance {opts.set}")
    ctx.count("sessions", ctx.runs)
    try:
        ctx.run_async(_run_all(ctx, lib, opts, items, writers, feedback, run_id, model_name, probe, bar))
    finally:
        bar.close()


async def _run_all(
    ctx: JobContext,
    lib: Library,
    opts: RelianceGame,
    items: list[Item],
    writers: dict[str, Any],
    feedback: Seeder,
    run_id: str,
    model_name: str,
    probe: ReliancePolicy,
    bar: Any,
) -> None:
    uses_llm = bool(probe.classifier.get("uses_llm"))
    for session in range(ctx.runs):
        services = Services(
            llm=ctx.llm if uses_llm else None, model=ctx.model, sample=ctx.seeds.sample("session", session)
        )
        base = {
            "run_id": run_id,
            "session": session,
            "set": opts.set,
            "agent": ctx.agent.name,
            "model": model_name,
            "show_posterior": opts.show_posterior,
        }
        chunk = opts.concurrency if probe.is_async else 1
        for start in range(0, len(items), chunk):
            batch = list(enumerate(items[start : start + chunk], start + 1))
            results = await asyncio.gather(
                *(_play_item(ctx, lib, opts, item, i, session, base, services, feedback) for i, item in batch)
            )
            for (i, item), rows in zip(batch, results, strict=True):  # written in item order
                writers["stages"].write_rows(rows)
                writers["scenarios"].write_rows([scenario_row(lib, base, item, i, rows)])
                writers["predictions"].write_rows(prediction_rows(base, item, i, rows))
                ctx.count("scenarios", 1)
                ctx.count("decisions", len(rows))
                bar.update(1)
