"""Run an arena job: ``runs`` replicate sessions, each one match or one round-robin tournament."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from games.arena.model import SEATS, ArenaModel, MatchRecord, RoundRecord
from games.arena.options import ArenaOptions, PlayerSpec, arena_options, pin_player_models
from games.arena.policy import ArenaPlayer, ModelPlayer
from games.arena.tables import (
    MATCH_COLUMNS,
    MOVE_COLUMNS,
    PREDICTION_COLUMNS,
    MatchMeta,
    match_row,
    move_rows,
    prediction_rows,
)
from trustsim.errors import ConfigError
from trustsim.job import JobContext
from trustsim.llm.config import ModelConfig

if TYPE_CHECKING:
    from trustsim.config import Draft

TABLES = {"moves": MOVE_COLUMNS, "matches": MATCH_COLUMNS, "predictions": PREDICTION_COLUMNS}


def check(draft: Draft) -> list[str]:
    """Fail at start, naming the key: options, agent names and their parameters."""
    options = arena_options(draft.options, draft.agent, draft.agent_params)
    for spec in options.entrants:
        spec.build()
    draft.options = pin_player_models(draft.options)
    return []


@dataclass(frozen=True)
class MatchPlan:
    """One match to play."""

    session: int
    pairing: int
    index: int  # 1-based, across the run
    specs: tuple[PlayerSpec, PlayerSpec]

    @property
    def match_id(self) -> str:
        return f"s{self.session}m{self.pairing:03d}"


def plan_matches(options: ArenaOptions, runs: int) -> list[MatchPlan]:
    """Every match of the job in play order: per session, the pairings in order."""
    plans: list[MatchPlan] = []
    for session in range(runs):
        for k, (i, j) in enumerate(options.pairings()):
            plans.append(MatchPlan(session, k, len(plans) + 1, (options.entrants[i], options.entrants[j])))
    return plans


def _model_name(model: ModelConfig | None) -> str:
    return model.name if model is not None else "unknown"


def _cell_model(model: ModelConfig | None, options: ArenaOptions) -> str:
    """The model(s) under test for the manifest cell: the LLM players' models, else ``scripted``."""
    specs = options.entrants[:1] if options.mode == "match" else options.entrants
    models = set()
    for spec in specs:
        player = spec.build()
        if player.classifier.get("uses_llm"):
            models.add(str(spec.model_name or _model_name(model)))
    return "+".join(sorted(models)) or "scripted"


class MatchRunner:
    """Builds the players and the Mesa model of one planned match and records its events."""

    def __init__(self, ctx: JobContext, options: ArenaOptions, plan: MatchPlan) -> None:
        self.ctx = ctx
        self.options = options
        self.plan = plan
        self.seed = ctx.seeds.seed("session", plan.session, "pairing", plan.pairing)
        players: list[ArenaPlayer] = [spec.build() for spec in plan.specs]
        for seat, player, spec in zip(SEATS, players, plan.specs, strict=True):
            if player.classifier.get("uses_llm"):
                if not isinstance(player, ModelPlayer):
                    raise ConfigError(
                        spec.key, f"agent {spec.name!r} calls a model but has no bind(client, model, sample)"
                    )
                sample = ctx.seeds.sample("session", plan.session, "pairing", plan.pairing, "seat", seat)
                if spec.model is not None:  # its own client (model, api_base, key variable)
                    player.bind(ctx.llm_for(spec.own_config), None, sample)
                else:
                    player.bind(ctx.llm, _model_name(ctx.model), sample)
        self.players = (players[0], players[1])
        self.model = ArenaModel(
            seed=self.seed,
            players=self.players,
            payoffs=options.payoffs,
            horizon=options.horizon,
            noise=options.noise,
            named=options.named,
            invalid_rule=options.invalid_rule,
            on_round=self._on_round,
        )
        rec = self.model.record
        ctx.recorder.event(
            "match_start",
            session=plan.session,
            match=plan.match_id,
            match_index=plan.index,
            seed=self.seed,
            players=rec.labels,
            agents={s: spec.name for s, spec in zip(SEATS, plan.specs, strict=True)},
            models=rec.models,
            length=rec.length,
        )

    def _on_round(self, r: RoundRecord) -> None:
        """One ``move`` event per seat: what it intended and played, then what it stated and (model answers
        only) its raw answer and cost."""
        for i, seat in enumerate(SEATS):
            d = r.decisions[seat]
            fields: dict[str, Any] = {
                "session": self.plan.session,
                "match": self.plan.match_id,
                "round": r.round,
                "seat": seat,
                "intended": r.intended[seat],
                "executed": r.executed[seat],
                "valid": d.valid,
            }
            if d.p_cooperate is not None or self.players[i].classifier.get("states_confidence"):
                fields["p_opponent_cooperates"] = d.p_cooperate
            if d.raw or d.reasoning:
                fields |= {
                    "raw": d.raw,
                    "reasoning": d.reasoning,
                    "invalid_reason": d.invalid_reason,
                    "p_invalid_reason": d.p_invalid_reason,
                    "latency_s": d.latency_s,
                    "tokens": [d.prompt_tokens, d.completion_tokens],
                    "cached": d.cached,
                }
                if d.request_key:
                    fields["request"] = d.request_key
            self.ctx.recorder.event("move", **fields)

    def meta(self) -> MatchMeta:
        o = self.options
        return MatchMeta(
            run_id=self.ctx.run_id,
            session=self.plan.session,
            match=self.plan.match_id,
            match_index=self.plan.index,
            agents={s: spec.name for s, spec in zip(SEATS, self.plan.specs, strict=True)},
            states_confidence={
                s: bool(p.classifier.get("states_confidence"))
                for s, p in zip(SEATS, self.players, strict=True)
            },
            temptation=o.payoffs.T,
            horizon=self.ctx.options.horizon,
            continuation=o.horizon.continue_p,
            announced_rounds=o.horizon.told_rounds,
            noise=o.noise,
            identity=o.identity,
        )

    def rows(self, rec: MatchRecord) -> dict[str, list[dict[str, Any]]]:
        self.ctx.recorder.event(
            "match_end",
            session=self.plan.session,
            match=self.plan.match_id,
            rounds=len(rec.rounds),
            payoffs={s: rec.total(s) for s in SEATS},
        )
        meta = self.meta()
        return {
            "moves": move_rows(rec, meta),
            "matches": [match_row(rec, meta)],
            "predictions": prediction_rows(rec, meta),
        }


def run(ctx: JobContext) -> None:
    """Play every planned match and write moves.csv, matches.csv and predictions.csv."""
    options = arena_options(ctx.options, ctx.agent, ctx.agent_params)
    ctx.set_cell(
        agent=ctx.agent.name,
        model=_cell_model(ctx.model, options),
        opponent=options.entrants[1].name if options.mode == "match" else "tournament",
        temptation=options.payoffs.T,
        horizon=ctx.options.horizon,
        noise=options.noise,
        identity=options.identity,
    )
    plans = plan_matches(options, ctx.runs)
    writers = {name: ctx.recorder.table(name, cols) for name, cols in TABLES.items()}
    bar = ctx.progress(len(plans), f"arena {options.mode}")

    def write(rows: dict[str, list[dict[str, Any]]]) -> None:
        for name, table_rows in rows.items():
            writers[name].write_rows(table_rows)
        ctx.count("matches", 1)
        ctx.count("rounds", len(rows["matches"]) and int(rows["matches"][0]["rounds"]))
        ctx.count("decisions", len(rows["moves"]))
        bar.update(1)

    ctx.count("sessions", ctx.runs)
    try:
        if not any(spec.build().is_async for spec in options.entrants):
            for plan in plans:  # one match at a time: its events, then its rows
                runner = MatchRunner(ctx, options, plan)
                write(runner.rows(runner.model.play()))
        else:
            ctx.run_async(_play_async([MatchRunner(ctx, options, plan) for plan in plans], write))
    finally:
        bar.close()


async def _play_async(runners: list[MatchRunner], write: Any) -> None:
    """All matches concurrently (the LLM client limits concurrency); rows are written in plan order."""
    results: list[dict[str, list[dict[str, Any]]] | None] = [None] * len(runners)
    flushed = 0

    async def play(i: int) -> None:
        nonlocal flushed
        rec = await runners[i].model.aplay()
        results[i] = runners[i].rows(rec)
        while flushed < len(runners) and results[flushed] is not None:
            write(results[flushed])
            results[flushed] = None
            flushed += 1

    await asyncio.gather(*(play(i) for i in range(len(runners))))
