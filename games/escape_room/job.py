"""Run an escape-room job: ``runs`` replicate sessions of ``games`` games each, written to the run directory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from games.escape_room.model import EscapeRoomModel
from games.escape_room.options import PARTNER_SEAT, EscapeRoomOptions, session_options
from games.escape_room.partner import ScriptedPartner
from games.escape_room.policy import EscapeRoomPolicy, Services
from games.escape_room.tables import (
    AGENT_GAME_COLUMNS,
    DECISION_COLUMNS,
    GAME_COLUMNS,
    PREDICTION_COLUMNS,
    Row,
    TableBuilder,
)
from games.escape_room.team import SeatPlan, seat_model_name, seat_plans, seat_prompt, team_label
from trustsim.errors import ConfigError
from trustsim.job import JobContext
from trustsim.llm.config import ModelConfig

TABLES = {
    "decisions": DECISION_COLUMNS,
    "games": GAME_COLUMNS,
    "agent_games": AGENT_GAME_COLUMNS,
    "predictions": PREDICTION_COLUMNS,
}


def _make_policy(ctx: JobContext, memory: str, plan: SeatPlan | None = None) -> EscapeRoomPolicy:
    """A fresh policy: the seat's own agent (``game.seats``) or the ``agent`` group's."""
    spec, params = (plan.agent, plan.params) if plan is not None else (ctx.agent, ctx.agent_params)
    key = f"game.seats.{plan.seat}.agent" if plan is not None and plan.own else "agent"
    policy = spec.build(params, memory=memory, config_key=key)
    if not isinstance(policy, EscapeRoomPolicy):
        raise ConfigError(key, f"agent {spec.name!r} is not an EscapeRoomPolicy")
    return policy


class SessionRunner:
    """Plays one replicate session (a sequence of games with persistent agents)."""

    table: EscapeRoomModel | None = None  # the table (Mesa model) the session played at

    def __init__(
        self, ctx: JobContext, options: EscapeRoomOptions, plans: dict[str, SeatPlan], session: int
    ) -> None:
        self.ctx = ctx
        self.options = options
        self.session = session
        self.policies: dict[str, EscapeRoomPolicy] = {
            seat: _make_policy(ctx, options.memory, plans.get(seat))
            for seat in options.seats
            if seat != PARTNER_SEAT
        }
        self.policies[PARTNER_SEAT] = ScriptedPartner(memory="none", schedule=options.d_correct)
        for seat, policy in self.policies.items():
            llm_seat = bool(policy.classifier.get("uses_llm"))
            own_model = plans[seat].model if seat in plans else None
            services = Services(  # each LLM seat: its own model config and client (mixed teams)
                llm=ctx.llm_for(own_model) if llm_seat else None,
                model=own_model or ctx.model,
                game=ctx.options,
            )
            policy.start_session(
                seat,
                ctx.seeds.seed("session", session, "seat", seat),  # the seed: the stream is made when used
                services.for_seat(ctx.seeds.sample("session", session, "seat", seat)),
            )
        if options.partner_slot == "random":
            self.partner_puzzle = int(ctx.seeds.rng("session", session, "partner_slot").integers(1, 5))
        else:
            self.partner_puzzle = len(options.seats)
        cell = dict(ctx.cell, run_id=ctx.run_id)
        self.tables = TableBuilder(
            cell,
            session,
            seat_models={s: p.model_name for s, p in self.policies.items()},
            seat_agents={
                s: (p.name if s != PARTNER_SEAT else "scripted_partner") for s, p in self.policies.items()
            },
            llm_seats={s for s, p in self.policies.items() if p.classifier.get("uses_llm")},
            seat_prompts=_seat_prompts(self.policies) if team_label(plans, ctx.model) else None,
        )

    @property
    def is_async(self) -> bool:
        return any(p.is_async for p in self.policies.values())

    async def games(
        self, table: EscapeRoomModel | None = None
    ) -> AsyncIterator[tuple[int, dict[str, list[Row]]]]:
        """Yield (game index, rows by table) for each finished game. ``table``: the table (Mesa
        model) an earlier session played at, to seat this one at (sessions played one after another share
        one); the table played at is left in :attr:`table`."""
        recorder = self.ctx.recorder
        recorder.event("session_start", session=self.session, partner_puzzle=self.partner_puzzle)
        model = table
        for game in range(1, self.options.games + 1):
            if game > 1 and self.options.memory == "none":
                for seat, policy in self.policies.items():
                    if seat != PARTNER_SEAT:
                        policy.forget()
            seed = self.ctx.seeds.seed("session", self.session, "game", game)
            if model is None:
                model = EscapeRoomModel(
                    seed=seed,
                    game=game,
                    options=self.options,
                    policies=self.policies,
                    partner_puzzle=self.partner_puzzle,
                    recorder=recorder,
                    session=self.session,
                )
            elif game == 1:
                model.next_session(
                    session=self.session,
                    policies=self.policies,
                    partner_puzzle=self.partner_puzzle,
                    seed=seed,
                )
            else:
                model.next_game(seed=seed, game=game)
            self.table = model
            rec = model.play_sync() if model.synchronous else await model.play()
            yield game, self.tables.rows(rec)  # table → the game's rows
        recorder.event("session_end", session=self.session)


def _seat_prompts(policies: dict[str, EscapeRoomPolicy]) -> dict[str, str | None]:
    """A mixed team's prompt style per seat: each LLM seat's own (its model may pin one); none for scripted
    seats."""
    return {
        s: (getattr(p, "prompt", None) if p.classifier.get("uses_llm") else None) for s, p in policies.items()
    }


def run(ctx: JobContext) -> None:
    options = session_options(ctx.options, ctx.groups["schedule"], ctx.groups["memory"], ctx.agent.name)
    plans = seat_plans(ctx.options, ctx.agent, ctx.agent_params)
    team = team_label(plans, ctx.model)
    if not team:  # the default team: every seat plays the agent / model groups
        probe = _make_policy(ctx, options.memory)
        llm = bool(probe.classifier.get("uses_llm"))
        agent, model = options.agent, _model_name(ctx.model) if llm else probe.model_name
        prompt = _prompt_style(ctx) if llm else None
    else:  # a mixed team: the cell names every agent, model and prompt style in it, and the team
        agent = "+".join(sorted({p.agent.name for p in plans.values()}))
        models = {seat_model_name(p, ctx.model) for p in plans.values() if p.uses_llm}
        model = "+".join(sorted(models)) or "scripted"
        prompts = {str(seat_prompt(p, ctx.model)) for p in plans.values() if seat_prompt(p, ctx.model)}
        prompt = "+".join(sorted(prompts)) or None
    ctx.set_cell(
        agent=agent,
        model=model,
        prompt=prompt,
        schedule=options.schedule,
        memory=options.memory,
        partner_slot=options.partner_slot,
        **({"team": team} if team else {}),  # a default team's cell is unchanged
    )
    writers = {name: ctx.recorder.table(name, cols) for name, cols in TABLES.items()}
    bar = ctx.progress(ctx.runs * options.games, f"escape room {options.schedule}")
    try:
        ctx.run_async(_play_all(ctx, options, plans, ctx.runs, writers, bar))
    finally:
        bar.close()


def _prompt_style(ctx: JobContext) -> str | None:
    """The LLM agent's prompt style (a cell key): the model config's pinned ``prompt``, else ``agent.prompt``."""
    return (ctx.model.prompt if ctx.model is not None else None) or ctx.agent_params.get("prompt")


def _model_name(model: ModelConfig | None) -> str:
    return model.name if model is not None else "unknown"


async def _play_all(
    ctx: JobContext,
    options: EscapeRoomOptions,
    plans: dict[str, SeatPlan],
    runs: int,
    writers: dict[str, Any],
    bar: Any,
) -> None:
    """Sessions run one after another for scripted agents (built lazily, so memory stays flat), concurrently
    for LLM agents. Rows are written in session order either way: tables are identical however sessions
    interleave.
    """

    def write(rows: dict[str, list[Row]]) -> None:
        for name, table_rows in rows.items():
            writers[name].write_tuples(table_rows)
        ctx.count("games", 1)
        ctx.count("decisions", len(rows["decisions"]))
        bar.update(1)

    ctx.count("sessions", runs)
    first = SessionRunner(ctx, options, plans, 0)
    if not first.is_async:  # one after another, at one table
        table = None
        for index in range(runs):
            runner = first if index == 0 else SessionRunner(ctx, options, plans, index)
            async for _, rows in runner.games(table):
                write(rows)
            table = runner.table
        return

    sessions = [first, *(SessionRunner(ctx, options, plans, i) for i in range(1, runs))]
    buffers: list[list[dict[str, list[Row]]]] = [[] for _ in sessions]
    done = [False] * len(sessions)
    next_to_flush = 0

    async def play(i: int) -> None:
        nonlocal next_to_flush
        async for _, rows in sessions[i].games():
            if i == next_to_flush:
                write(rows)
            else:
                buffers[i].append(rows)
        done[i] = True
        while next_to_flush < len(sessions) and done[next_to_flush]:
            next_to_flush += 1
            if next_to_flush < len(sessions):
                for rows in buffers[next_to_flush]:
                    write(rows)
                buffers[next_to_flush].clear()

    await asyncio.gather(*(play(i) for i in range(len(sessions))))
