"""Run a trust-game job: ``runs`` sessions, each ``game.pairs`` independent pairs playing ``rounds`` rounds."""

from __future__ import annotations

from typing import Any

from games.trust_game.model import ExchangeRecord, PairRecord, TrustGameModel, pair_lengths
from games.trust_game.options import TrustGameOptions
from games.trust_game.roles import RoleSpec, role_specs
from games.trust_game.tables import (
    TABLES,
    SessionMeta,
    cluster_id,
    exchange_rows,
    prediction_rows,
)
from games.trust_game.types import ROLES, Decision, ModelPlayer, Player, Role
from trustsim.errors import ConfigError


def _decision_fields(d: Decision) -> dict[str, Any]:
    fields: dict[str, Any] = {"amount": d.amount.value, "valid": d.amount.valid}
    if not d.amount.valid:
        fields.update(invalid_reason=d.amount.reason, amount_raw=d.amount.raw)
    if d.expected is not None or d.expected_invalid_reason:
        fields.update(expected=d.expected, expected_invalid_reason=d.expected_invalid_reason)
    if d.p is not None or d.p_invalid_reason:
        fields.update(p=d.p, p_invalid_reason=d.p_invalid_reason)
    if d.raw:
        fields.update(
            raw=d.raw,
            reasoning=d.reasoning,
            latency_s=d.latency_s,
            tokens=[d.prompt_tokens, d.completion_tokens],
            cached=d.cached,
        )
        if d.request_key:
            fields["request"] = d.request_key
    return fields


class SessionRunner:
    """Builds the players and the Mesa model of one session and records its events."""

    def __init__(
        self,
        ctx: Any,
        options: TrustGameOptions,
        roles: dict[Role, RoleSpec],
        session: int,
        on_decided: Any = None,
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.roles = roles
        players = [
            (self._player(session, p, "trustor"), self._player(session, p, "trustee"))
            for p in range(options.pairs)
        ]
        self.seed = ctx.seeds.seed("session", session)
        self.model = TrustGameModel(
            seed=self.seed,
            agent_seed=ctx.seeds.seed("session", session, "players"),
            players=players,
            stakes=options.stakes,
            horizon=options.horizon_spec,
            history=options.history_mode,
            population=options.population(),
            on_exchange=self._on_exchange,
            on_decided=on_decided,
        )
        self.meta = SessionMeta(
            run_id=ctx.run_id,
            session=session,
            stakes=options.stakes,
            horizon=options.horizon,
            history=options.history,
            agents={r: roles[r].name for r in ROLES},
            models={r: roles[r].model(ctx.model) for r in ROLES},
            states_confidence={
                r: r in players[0][ROLES.index(r)].classifier.get("confidence_roles", ()) for r in ROLES
            }
            if players
            else dict.fromkeys(ROLES, False),
        )
        ctx.recorder.event(
            "session_start",
            session=session,
            seed=self.seed,
            pairs=options.pairs,
            agents=self.meta.agents,
            models=self.meta.models,
            lengths=[p.length for p in self.model.pairs],
        )

    def _player(self, session: int, pair: int, role: Role) -> Player:
        spec = self.roles[role]
        player = spec.build()
        if spec.uses_llm:
            sample = self.ctx.seeds.sample("session", session, "pair", pair, role)
            if not isinstance(player, ModelPlayer):
                raise ConfigError(
                    spec.key, f"agent {spec.name!r} calls a model but has no bind(client, model, sample)"
                )
            client = self.ctx.llm_for(spec.own_config)  # the role's own client, else the job's
            player.bind(client, spec.own_config or self.ctx.model, sample)
        return player

    def _on_exchange(self, pair: PairRecord, x: ExchangeRecord) -> None:
        self.ctx.recorder.event(
            "exchange",
            session=self.session,
            pair=cluster_id(self.session, pair.pair),
            round=x.round,
            sent=x.sent,
            received=x.received,
            returned=x.returned,
            payoffs=[x.trustor_payoff, x.trustee_payoff],
            trustor=_decision_fields(x.trustor),
            trustee=_decision_fields(x.trustee) if x.trustee.asked else None,
        )

    def play(self) -> dict[str, list[dict[str, Any]]]:
        """Play the session; returns its table rows."""
        pairs = self.ctx.run_async(self.model.aplay()) if self.model.is_async else self.model.play()
        self.ctx.recorder.event(
            "session_end",
            session=self.session,
            exchanges=sum(len(p.exchanges) for p in pairs),
            rounds=self.model.round - 1,
        )
        rows = {
            "exchanges": exchange_rows(pairs, self.meta),
            "predictions": prediction_rows(pairs, self.meta),
        }
        self.model.release()
        return rows


def run(ctx: Any) -> None:
    """Play every session and write exchanges.csv and predictions.csv."""
    options: TrustGameOptions = ctx.options
    roles = role_specs(options, ctx.agent, ctx.agent_params)
    models = {r: roles[r].model(ctx.model) for r in ROLES}
    ctx.set_cell(
        agent=ctx.agent.name,
        model="+".join(sorted({m for m in models.values() if m != "scripted"})) or "scripted",
        trustor=roles["trustor"].name,
        trustee=roles["trustee"].name,
        trustor_model=models["trustor"],
        trustee_model=models["trustee"],
        variant=options.variant,
        horizon=options.horizon,
        history=options.history,
        endowment=options.endowment,
        multiplier=options.multiplier,
    )
    writers = {name: ctx.recorder.table(schema) for name, schema in TABLES.items()}
    runs = ctx.runs
    ctx.count("sessions", runs)
    # progress per exchange (one pair's round; one-shot: per pair), each counted as its decisions come in
    exchanges = sum(
        sum(pair_lengths(ctx.seeds.seed("session", s), options.horizon_spec, options.pairs))
        for s in range(runs)
    )
    bar = ctx.progress(exchanges, "trust game exchanges")
    try:
        for session in range(runs):
            rows = SessionRunner(ctx, options, roles, session, lambda _pair: bar.update(1)).play()
            for name, table_rows in rows.items():
                writers[name].write_rows(table_rows)
            ctx.count("pairs", options.pairs)
            ctx.count("exchanges", len(rows["exchanges"]))
    finally:
        bar.close()
