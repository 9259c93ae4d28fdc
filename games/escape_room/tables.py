"""Rows of the escape-room tables (decisions, games, agent_games, predictions) from finished games.

:meth:`TableBuilder.rows` gives each table's rows of one game as tuples of cell text in the table's column order
(``TableWriter.write_tuples`` writes them); the cells that are the same for a whole session (run id, seat,
agent, model, prompt, memory, schedule) are made once per session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from games.escape_room.options import PARTNER_SEAT
from games.predictions import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the shared schema, re-exported
from trustsim.rundir.writer import cell_text

if TYPE_CHECKING:  # annotations only: registering the game (discovery) does not import mesa
    from games.escape_room.model import DecisionRecord, GameRecord
    from games.escape_room.rules import GameState
    from games.escape_room.types import CapsuleView

Row = tuple[str, ...]
"""A table row: its cells' text, in the table's column order."""

PUZZLES = (1, 2, 3, 4)
DECISION_COLUMNS = [
    "run_id",
    "session",
    "game",
    "round",
    "seat",
    "is_partner",
    "agent",
    "model",
    "prompt",
    "memory",
    "schedule",
    "d_correct",
    "partner_puzzle",
    "own_puzzle",
    "coins_before",
    "action",
    "target",
    "password",
    "valid",
    "invalid_reason",
    "resolved_action",
    "verify_partner",
    *(f"conf_Q{k}" for k in PUZZLES),
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
]
GAME_COLUMNS = [
    "run_id",
    "session",
    "game",
    "seed",
    "agent",
    "model",
    "team",
    "prompt",
    "memory",
    "schedule",
    "partner_slot",
    "d_correct",
    "partner_puzzle",
    "outcome",
    "escaped",
    "rounds",
    "escape_round",
    "verifications",
    "partner_verifications",
    "protective_verifications",
    "volunteers",
    "deaths_wrong_password",
    "deaths_no_volunteer",
    "survivors",
    "invalid",
]
AGENT_GAME_COLUMNS = [
    "run_id",
    "session",
    "game",
    "seat",
    "is_partner",
    "agent",
    "model",
    "prompt",
    "memory",
    "schedule",
    "d_correct",
    "survived",
    "death_cause",
    "death_round",
    "rounds_alive",
    "coins",
    "score",
    "verifications",
]


def password_text(password: dict[int, str] | None) -> str | None:
    if not password:
        return None
    return ";".join([f"Q{k}={password[k]}" for k in sorted(password)])


def default_trusted(capsules: tuple[CapsuleView, ...], owner: str) -> str:
    """The capsule a seat would trust by default: most endorsers, preferring one a non-owner endorsed."""
    best = max(capsules, key=lambda c: (len(c.endorsers), any(e != owner for e in c.endorsers)))
    return best.label


def _bool(value: bool) -> str:
    return "true" if value else "false"


class TableBuilder:
    """Builds the rows of one session's games; ``cell`` holds run-wide keys (run_id, agent, model, ...)."""

    def __init__(
        self,
        cell: dict[str, Any],
        session: int,
        seat_models: dict[str, str],
        seat_agents: dict[str, str],
        llm_seats: set[str],
        seat_prompts: dict[str, str | None] | None = None,
    ) -> None:
        """``seat_prompts``: a mixed team's prompt style per seat (None: the cell's ``prompt``)."""
        self.llm_seats = llm_seats
        run_id, memory, schedule = (
            cell_text(cell["run_id"]),
            cell_text(cell["memory"]),
            cell_text(cell["schedule"]),
        )
        prompt = cell_text(cell.get("prompt"))
        prompts = {s: cell_text(v) for s, v in (seat_prompts or {}).items()}
        self._session = (run_id, str(session))  # run_id, session
        self._seat: dict[str, Row] = {}  # seat → seat, is_partner, agent, model, prompt, memory, schedule
        self._forecaster: dict[str, Row] = {}  # seat → predictions' run_id ... schedule
        self._subject: dict[str, Row] = {}  # seat → predictions' subject, subject_kind
        for seat in seat_agents:
            agent, model = cell_text(seat_agents[seat]), cell_text(seat_models[seat])
            partner = seat == PARTNER_SEAT
            self._seat[seat] = (
                seat,
                _bool(partner),
                agent,
                model,
                prompts.get(seat, prompt),
                memory,
                schedule,
            )
            self._forecaster[seat] = (run_id, "escape_room", f"s{session}", model, agent, memory, schedule)
            self._subject[seat] = (seat, "scripted_partner" if partner else "agent")
        team = cell.get("team") or None  # mixed teams: A=llm:m1;B=llm:m1;C=bayes (empty: default)
        self._cell = tuple(  # games: agent ... partner_slot
            map(
                cell_text,
                (cell["agent"], cell["model"], team, prompt, memory, schedule, cell["partner_slot"]),
            )
        )

    def rows(self, rec: GameRecord) -> dict[str, list[Row]]:
        """The game's rows of every table (decisions, games, agent_games, predictions)."""
        state = rec.state
        game = (*self._session, str(rec.game))  # run_id, session, game
        d_correct = _bool(rec.d_correct)
        partner = rec.partner_puzzle
        own = {seat: state.own_puzzle(seat) for seat in state.seats}
        verifications = dict.fromkeys(state.seats, 0)
        decisions = []
        forecasts = []  # the decisions that give prediction rows, with their confidence cells
        for d in rec.decisions:
            confidence = _confidence_cells(d.decision.confidence)
            decisions.append(self._decision_row(d, game, d_correct, partner, own[d.seat], confidence))
            verifications[d.seat] += d.resolved.kind == "verify"
            if d.decision.confidence is not None or d.seat in self.llm_seats:  # else no confidence is stated
                forecasts.append((d, confidence))
        return {
            "decisions": decisions,
            "games": [self._game_row(rec, game, d_correct)],
            "agent_games": self._agent_game_rows(rec, game, d_correct, verifications),
            "predictions": self._prediction_rows(rec, forecasts, own),
        }

    def _decision_row(
        self, d: DecisionRecord, game: Row, d_correct: str, partner: int, own: int, confidence: Row
    ) -> Row:
        requested = d.decision.action
        resolved = d.resolved
        target = requested.target if requested is not None and requested.kind == "verify" else None
        password = requested.password if requested is not None and requested.kind == "volunteer" else None
        return (
            *game,
            str(d.round),
            *self._seat[d.seat],
            d_correct,
            str(partner),
            str(own),
            str(d.coins_before),
            d.requested,
            "" if target is None else str(target),
            password_text(password) or "",
            _bool(d.valid),
            d.invalid_reason or "",
            resolved.kind,
            _bool(resolved.kind == "verify" and resolved.target == partner),
            *confidence,
            cell_text(d.decision.prompt_tokens),
            cell_text(d.decision.completion_tokens),
            cell_text(d.decision.cached_tokens),
        )

    def _game_row(self, rec: GameRecord, game: Row, d_correct: str) -> Row:
        """The games row; its counts of decisions are of the tested seats (not the partner's)."""
        state = rec.state
        escape_round = state.escape_round or 0
        verifications = partner_verifications = protective = volunteers = invalid = 0
        for d in rec.decisions:
            if d.seat == PARTNER_SEAT:
                continue
            kind = d.resolved.kind
            if kind == "verify":
                verifications += 1
                partner_verifications += d.resolved.target == rec.partner_puzzle
                protective += d.round < escape_round  # a verification before the escape
            volunteers += kind == "volunteer"
            invalid += not d.valid
        causes = [cause for _, cause, _ in state.deaths]
        return (
            *game,
            str(rec.seed),
            *self._cell,
            d_correct,
            str(rec.partner_puzzle),
            state.outcome,
            _bool(state.escaped),
            str(state.round),
            cell_text(state.escape_round),
            str(verifications),
            str(partner_verifications),
            str(protective),
            str(volunteers),
            str(causes.count("wrong_password")),
            str(causes.count("no_volunteer")),
            ";".join(state.alive),
            str(invalid),
        )

    def _agent_game_rows(
        self, rec: GameRecord, game: Row, d_correct: str, verifications: dict[str, int]
    ) -> list[Row]:
        state = rec.state
        deaths = {seat: (cause, rnd) for seat, cause, rnd in state.deaths}
        rows = []
        for seat in state.seats:
            cause, rnd = deaths.get(seat, (None, None))
            rows.append(
                (
                    *game,
                    *self._seat[seat],
                    d_correct,
                    _bool(seat in state.alive),
                    cell_text(cause),
                    cell_text(rnd),
                    str(rec.rounds_alive.get(seat, 0)),
                    str(state.coins[seat]),
                    str(state.score(seat)),
                    str(verifications[seat]),
                )
            )
        return rows

    def _prediction_rows(
        self, rec: GameRecord, forecasts: list[tuple[DecisionRecord, Row]], own: dict[str, int]
    ) -> list[Row]:
        """Stated P(trusted capsule is right) per non-own puzzle, scored against the capsule's truth: the capsule
        the seat names (``trusted``) if the round's table holds it, else the one it would trust by default."""
        state = rec.state
        owners = state.owners
        right = _capsule_truth(state)
        game = str(rec.game)
        # round → puzzle → (the labels of its capsules, the capsule trusted by default), as the round's seats saw it
        shown: dict[int, dict[int, tuple[set[str], str]]] = {}
        rows = []
        for d, confidence in forecasts:
            table = shown.get(d.round)
            if table is None:
                table = shown[d.round] = {
                    k: ({c.label for c in caps}, default_trusted(caps, owners[k]))
                    for k, caps in rec.views[d.round].items()
                }
            trusted = d.decision.trusted or {}
            for k in PUZZLES:
                if k == own[d.seat]:
                    continue
                labels, default = table[k]
                label = trusted.get(k)
                if label not in labels:
                    label = default
                rows.append(
                    (
                        *self._forecaster[d.seat],
                        *self._subject[owners[k]],
                        game,
                        str(d.round),
                        confidence[k - 1],
                        "1" if right.get((k, label)) else "0",
                        "",
                        "native",
                        f"Q{k}:{label}",
                    )
                )
        return rows

    # The same rows as mappings (column → cell text).
    def decision_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return [dict(zip(DECISION_COLUMNS, row, strict=True)) for row in self.rows(rec)["decisions"]]

    def game_row(self, rec: GameRecord) -> dict[str, str]:
        return dict(zip(GAME_COLUMNS, self.rows(rec)["games"][0], strict=True))

    def agent_game_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return [dict(zip(AGENT_GAME_COLUMNS, row, strict=True)) for row in self.rows(rec)["agent_games"]]

    def prediction_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return [dict(zip(PREDICTION_COLUMNS, row, strict=True)) for row in self.rows(rec)["predictions"]]


_NOT_STATED = ("",) * len(PUZZLES)


def _confidence_cells(confidence: dict[int, Any] | None) -> Row:
    """conf_Q1 ... conf_Q4: a stated confidence per puzzle (empty where none is stated)."""
    if not confidence:
        return _NOT_STATED
    return tuple([cell_text(confidence.get(k)) for k in PUZZLES])


def _capsule_truth(state: GameState) -> dict[tuple[int, str], bool]:
    """(puzzle, capsule label) → whether the capsule holds the puzzle's answer."""
    return {
        (k, c.label): c.value == state.puzzles[k].answer for k, caps in state.capsules.items() for c in caps
    }
