"""Rows of the trust-game tables (exchanges.csv, predictions.csv) from a finished session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from games.predictions import PREDICTIONS
from games.trust_game.rules import Stakes, return_ratio
from games.trust_game.types import Decision, Role
from trustsim.rundir import TableSchema
from trustsim.rundir.writer import bool_text, cell_text

if TYPE_CHECKING:
    from games.trust_game.model import PairRecord

EXCHANGE_COLUMNS = [
    "run_id", "session", "pair", "round", "rounds", "trustor", "trustor_model", "trustee", "trustee_model",
    "endowment", "trustee_endowment", "multiplier", "horizon", "history", "sent", "received", "returned",
    "return_ratio", "trustor_payoff", "trustee_payoff", "valid", "sent_valid", "sent_invalid_reason", "sent_raw",
    "trustee_asked", "returned_valid", "returned_invalid_reason", "returned_raw", "expected_return",
    "expected_return_error", "p_return_at_least_sent", "p_next_send_at_least",
]  # fmt: skip
EXCHANGES = TableSchema(
    "exchanges", tuple(EXCHANGE_COLUMNS), "one row per trust-game exchange (docs/trust_game.md)"
)
TABLES = {"exchanges": EXCHANGES, "predictions": PREDICTIONS}
"""The game's tables; predictions.csv is the shipped games' shared calibration schema (games/predictions.py)."""


@dataclass(frozen=True)
class SessionMeta:
    """Identifiers and settings repeated on every row of a session."""

    run_id: str
    session: int
    stakes: Stakes
    horizon: str
    history: str
    agents: dict[Role, str]  # role → agent name (config name)
    models: dict[Role, str]  # role → model (``scripted`` for scripted agents)
    states_confidence: dict[Role, bool]


def cluster_id(session: int, pair: int) -> str:
    """The pair's id across the run (the bootstrap cluster): ``s<session>p<pair>``, pair 1-based."""
    return f"s{session}p{pair + 1:03d}"


def _raw(d: Decision) -> str | None:
    return d.amount.raw if d.raw else None  # the amount as the model gave it; scripted players: empty


def exchange_rows(pairs: list[PairRecord], meta: SessionMeta) -> list[dict[str, str]]:
    """One row per exchange, in (pair, round) order, as cell text (the writer's fast path)."""
    st = meta.stakes
    t = cell_text
    run_id, session, horizon, history = t(meta.run_id), str(meta.session), t(meta.horizon), t(meta.history)
    trustor, trustor_model = t(meta.agents["trustor"]), t(meta.models["trustor"])
    trustee, trustee_model = t(meta.agents["trustee"]), t(meta.models["trustee"])
    endowment, trustee_endowment, multiplier = t(st.endowment), t(st.trustee_endowment), t(st.multiplier)
    rows = []
    for pair in pairs:
        pair_text, length = str(pair.pair + 1), t(pair.length)
        for x in pair.exchanges:
            tr, te = x.trustor, x.trustee
            rows.append(
                {
                    "run_id": run_id,
                    "session": session,
                    "pair": pair_text,
                    "round": t(x.round),
                    "rounds": length,
                    "trustor": trustor,
                    "trustor_model": trustor_model,
                    "trustee": trustee,
                    "trustee_model": trustee_model,
                    "endowment": endowment,
                    "trustee_endowment": trustee_endowment,
                    "multiplier": multiplier,
                    "horizon": horizon,
                    "history": history,
                    "sent": t(x.sent),
                    "received": t(x.received),
                    "returned": t(x.returned),
                    "return_ratio": t(return_ratio(x.sent, x.returned, st.multiplier)),
                    "trustor_payoff": t(x.trustor_payoff),
                    "trustee_payoff": t(x.trustee_payoff),
                    "valid": bool_text(tr.amount.valid and te.amount.valid),
                    "sent_valid": t(tr.amount.valid),
                    "sent_invalid_reason": t(tr.amount.reason),
                    "sent_raw": t(_raw(tr)),
                    "trustee_asked": t(te.asked),
                    "returned_valid": t(te.amount.valid),
                    "returned_invalid_reason": t(te.amount.reason),
                    "returned_raw": t(_raw(te)) if te.asked else "",
                    "expected_return": t(tr.expected),
                    "expected_return_error": t(abs(tr.expected - x.returned))
                    if tr.expected is not None and x.sent > 0
                    else "",
                    "p_return_at_least_sent": t(tr.p),
                    "p_next_send_at_least": t(te.p),
                }
            )
    return rows


def prediction_rows(pairs: list[PairRecord], meta: SessionMeta) -> list[dict[str, Any]]:
    """Calibration pairs in the shared schema (``p`` empty when stated invalid or missing).

    - the trustor's P(r ≥ s), for every exchange with s > 0 (outcome: 1 if r ≥ s);
    - the trustee's P(the trustor sends at least as much next round), for every exchange it answered that has
      a next round in the pair (outcome: 1 if the next s ≥ this s).
    """
    rows = []

    def row(pair: PairRecord, rnd: int, role: Role, p: float | None, outcome: bool, item: str) -> None:
        other: Role = "trustee" if role == "trustor" else "trustor"
        rows.append(
            {
                "run_id": meta.run_id,
                "game_type": "trust_game",
                "cluster": cluster_id(meta.session, pair.pair),
                "model": meta.models[role],
                "agent": meta.agents[role],
                "memory": None,
                "schedule": None,
                "subject": meta.agents[other] if meta.models[other] == "scripted" else meta.models[other],
                "subject_kind": other,
                "game": pair.pair + 1,
                "round": rnd,
                "p": p,
                "outcome": int(outcome),
                "p_exact": None,
                "source": "native",
                "item": item,
            }
        )

    for pair in pairs:
        xs = pair.exchanges
        for i, x in enumerate(xs):
            if meta.states_confidence["trustor"] and x.sent > 0:
                row(pair, x.round, "trustor", x.trustor.p, x.returned >= x.sent, "return_at_least_sent")
            if meta.states_confidence["trustee"] and x.trustee.asked and i + 1 < len(xs):
                row(pair, x.round, "trustee", x.trustee.p, xs[i + 1].sent >= x.sent, "next_send_at_least")
    return rows
