"""Run a public-goods job: ``runs`` sessions of ``game.groups`` independent groups of two."""

from __future__ import annotations

from typing import Any

from public_goods.model import SEATS, GroupRecord, PublicGoodsModel
from public_goods.policy import Player
from trustsim.errors import ConfigError
from trustsim.job import JobContext
from trustsim.rundir import TableSchema, prediction_schema

GAME = "public_goods"
ROUNDS = TableSchema(
    "rounds",
    ("run_id", "session", "group", "round", "seat", "agent", "model", "contribution", "payoff"),
    "one row per seat and round",
)
PREDICTIONS = prediction_schema()  # no cell columns of its own


def make_player(ctx: JobContext) -> Player:
    """A fresh player of the ``agent`` group."""
    player = ctx.agent.build(ctx.agent_params)
    if not isinstance(player, Player):
        raise ConfigError("agent", f"agent {ctx.agent.name!r} is not a public-goods player")
    return player


def rows(ctx: JobContext, session: int, group: int, rec: GroupRecord) -> tuple[list[dict], list[dict]]:
    """The group's rows of rounds.csv and predictions.csv."""
    half = ctx.options.endowment / 2
    base = {
        "run_id": ctx.run_id,
        "session": session,
        "group": group,
        "agent": ctx.agent.name,
        "model": "scripted",
    }
    played, predicted = [], []
    for r in rec.rounds:
        for seat in SEATS:
            choice = r.choices[seat]
            played.append({**base, "round": r.round, "seat": seat, "contribution": choice.contribution,
                           "payoff": r.payoffs[seat]})  # fmt: skip
            if choice.p_partner_half is None:
                continue
            other = "B" if seat == "A" else "A"
            predicted.append({
                "run_id": ctx.run_id, "game_type": GAME, "cluster": f"s{session}/g{group}", "model": "scripted",
                "agent": ctx.agent.name, "subject": other, "subject_kind": "partner", "game": group,
                "round": r.round, "p": choice.p_partner_half,
                "outcome": int(r.choices[other].contribution >= half), "p_exact": None, "source": "native",
                "item": seat,
            })  # fmt: skip
    return played, predicted


def run(ctx: JobContext) -> None:
    """Play every group of every session and write rounds.csv and predictions.csv."""
    options = ctx.options
    ctx.set_cell(agent=ctx.agent.name, model="scripted", multiplier=options.multiplier)
    played, predicted = ctx.recorder.table(ROUNDS), ctx.recorder.table(PREDICTIONS)
    ctx.count("sessions", ctx.runs)
    bar = ctx.progress(ctx.runs * options.groups, "public goods")
    try:
        for session in range(ctx.runs):
            ctx.recorder.event("session_start", session=session)
            for group in range(options.groups):
                ctx.recorder.event("group_start", session=session, group=group)
                model = PublicGoodsModel(
                    seed=ctx.seeds.seed("session", session, "group", group),
                    players=(make_player(ctx), make_player(ctx)),
                    rounds=options.rounds,
                    endowment=options.endowment,
                    multiplier=options.multiplier,
                )
                rec = model.play()
                for r in rec.rounds:
                    contributions = {s: c.contribution for s, c in r.choices.items()}
                    fields: dict[str, Any] = {"session": session, "group": group, "round": r.round}
                    ctx.recorder.event("round", **fields, contributions=contributions, payoffs=r.payoffs)
                ctx.recorder.event("group_end", session=session, group=group)
                round_rows, prediction_rows = rows(ctx, session, group, rec)
                played.write_rows(round_rows)
                predicted.write_rows(prediction_rows)
                ctx.count("groups")
                ctx.count("decisions", len(round_rows))
                bar.update(1)
    finally:
        bar.close()
