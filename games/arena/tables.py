"""Rows of the arena tables (moves.csv, matches.csv, predictions.csv) from a finished match."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from games.arena.rules import COOPERATE, DEFECT
from games.predictions import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the shared schema, re-exported
from trustsim.rundir.writer import bool_text, cell_text

if TYPE_CHECKING:  # a type only: registering the game (discovery) does not import mesa
    from games.arena.model import MatchRecord

MOVE_COLUMNS = [
    "run_id", "session", "match", "match_index", "round", "seat", "player", "model", "opponent",
    "opponent_model", "intended", "move", "flipped", "opponent_move", "payoff", "opponent_payoff",
    "cum_payoff", "p_opponent_cooperates", "valid", "invalid_reason", "p_invalid_reason",
    "prompt_tokens", "completion_tokens", "temptation", "horizon", "noise", "identity",
]  # fmt: skip
MATCH_COLUMNS = [
    "run_id", "session", "match", "match_index", "seed", "player_a", "model_a", "player_b", "model_b",
    "rounds", "payoff_a", "payoff_b", "mean_payoff_a", "mean_payoff_b", "coop_a", "coop_b", "mutual_coop",
    "mutual_defect", "first_defection_a", "first_defection_b", "invalid_a", "invalid_b", "temptation",
    "horizon", "continuation", "announced_rounds", "noise", "identity",
]  # fmt: skip


@dataclass(frozen=True)
class MatchMeta:
    """Identifiers and settings repeated on every row of a match."""

    run_id: str
    session: int
    match: str
    match_index: int
    agents: dict[str, str]  # seat → agent name (config name)
    states_confidence: dict[str, bool]
    temptation: float
    horizon: str
    continuation: float
    announced_rounds: int | None
    noise: float
    identity: str


def _first(moves: Sequence[str], what: str) -> int | None:
    return next((i + 1 for i, m in enumerate(moves) if m == what), None)


def move_rows(rec: MatchRecord, meta: MatchMeta) -> list[dict[str, str]]:
    """One row per player-round, as cell text (the writer's fast path: no per-cell formatting)."""
    rows = []
    cum = {"A": 0.0, "B": 0.0}
    head = (cell_text(meta.run_id), str(meta.session), cell_text(meta.match), str(meta.match_index))
    tail = (
        cell_text(meta.temptation),
        cell_text(meta.horizon),
        cell_text(meta.noise),
        cell_text(meta.identity),
    )
    names = {s: (cell_text(rec.labels[s]), cell_text(rec.models[s])) for s in ("A", "B")}
    for r in rec.rounds:
        round_text = str(r.round)
        for seat, other in (("A", "B"), ("B", "A")):
            d = r.decisions[seat]
            cum[seat] += r.payoffs[seat]
            rows.append(
                {
                    "run_id": head[0],
                    "session": head[1],
                    "match": head[2],
                    "match_index": head[3],
                    "round": round_text,
                    "seat": seat,
                    "player": names[seat][0],
                    "model": names[seat][1],
                    "opponent": names[other][0],
                    "opponent_model": names[other][1],
                    "intended": r.intended[seat],
                    "move": r.executed[seat],
                    "flipped": bool_text(r.flipped[seat]),
                    "opponent_move": r.executed[other],
                    "payoff": cell_text(r.payoffs[seat]),
                    "opponent_payoff": cell_text(r.payoffs[other]),
                    "cum_payoff": cell_text(cum[seat]),
                    "p_opponent_cooperates": cell_text(d.p_cooperate),
                    "valid": bool_text(d.valid),
                    "invalid_reason": cell_text(d.invalid_reason),
                    "p_invalid_reason": cell_text(d.p_invalid_reason) if meta.states_confidence[seat] else "",
                    "prompt_tokens": cell_text(d.prompt_tokens),
                    "completion_tokens": cell_text(d.completion_tokens),
                    "temptation": tail[0],
                    "horizon": tail[1],
                    "noise": tail[2],
                    "identity": tail[3],
                }
            )
    return rows


def match_row(rec: MatchRecord, meta: MatchMeta) -> dict[str, Any]:
    """One row per match."""
    a, b = rec.moves("A"), rec.moves("B")
    n = len(rec.rounds)
    invalid = {s: sum(not r.decisions[s].valid for r in rec.rounds) for s in ("A", "B")}
    return {
        "run_id": meta.run_id,
        "session": meta.session,
        "match": meta.match,
        "match_index": meta.match_index,
        "seed": rec.seed,
        "player_a": rec.labels["A"],
        "model_a": rec.models["A"],
        "player_b": rec.labels["B"],
        "model_b": rec.models["B"],
        "rounds": n,
        "payoff_a": rec.total("A"),
        "payoff_b": rec.total("B"),
        "mean_payoff_a": rec.total("A") / n,
        "mean_payoff_b": rec.total("B") / n,
        "coop_a": sum(m == COOPERATE for m in a) / n,
        "coop_b": sum(m == COOPERATE for m in b) / n,
        "mutual_coop": sum(x == y == COOPERATE for x, y in zip(a, b, strict=True)) / n,
        "mutual_defect": sum(x == y == DEFECT for x, y in zip(a, b, strict=True)) / n,
        "first_defection_a": _first(a, DEFECT),
        "first_defection_b": _first(b, DEFECT),
        "invalid_a": invalid["A"],
        "invalid_b": invalid["B"],
        "temptation": meta.temptation,
        "horizon": meta.horizon,
        "continuation": meta.continuation if meta.horizon == "unknown" else None,
        "announced_rounds": meta.announced_rounds,
        "noise": meta.noise,
        "identity": meta.identity,
    }


def prediction_rows(rec: MatchRecord, meta: MatchMeta) -> list[dict[str, str]]:
    """One row per player-round of each player that states confidence (``p`` empty when missing), as cell
    text.

    The outcome is the opponent's executed move that round (1 = cooperated).
    """
    rows = []
    run_id, match, game = cell_text(meta.run_id), cell_text(meta.match), str(meta.match_index)
    stating = [
        (seat, other, cell_text(rec.models[seat]), cell_text(meta.agents[seat]), cell_text(rec.labels[other]))
        for seat, other in (("A", "B"), ("B", "A"))
        if meta.states_confidence[seat]
    ]
    for r in rec.rounds:
        for seat, other, model, agent, subject in stating:
            rows.append(
                {
                    "run_id": run_id,
                    "game_type": "arena",
                    "cluster": match,
                    "model": model,
                    "agent": agent,
                    "memory": "",
                    "schedule": "",
                    "subject": subject,
                    "subject_kind": "opponent",
                    "game": game,
                    "round": str(r.round),
                    "p": cell_text(r.decisions[seat].p_cooperate),
                    "outcome": "1" if r.executed[other] == COOPERATE else "0",
                    "p_exact": "",
                    "source": "native",
                    "item": seat,
                }
            )
    return rows
