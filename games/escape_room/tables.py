"""Rows of the escape-room tables (decisions, games, agent_games, predictions) from finished games.

Rows are built as CSV lines (:meth:`TableBuilder.lines`, written by ``TableWriter.write_lines``): the cells
that are the same for a whole session (run id, seat, agent, model, prompt, memory, schedule) are joined and
quoted once per session, so a row formats only the cells that vary. Every cell that could hold a comma, a quote
or a line break goes through ``csv_cell`` (the ``csv`` module's quoting); numbers and booleans never do. The
same rows as mappings (``decision_rows`` and the others) are read back from the lines.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from games.escape_room.options import PARTNER_SEAT
from trustsim.rundir import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the one schema, re-exported
from trustsim.rundir.writer import bool_text, cell_text, csv_cell

if TYPE_CHECKING:  # annotations only: registering the game (discovery) does not import mesa
    from games.escape_room.model import DecisionRecord, GameRecord
    from games.escape_room.rules import GameState
    from games.escape_room.types import CapsuleView

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


def _text(value: Any) -> str:
    """A cell of any value (:func:`cell_text`), quoted for a CSV line (:func:`csv_cell`)."""
    kind = type(value)
    if kind is int:
        return str(value)
    if value is None:
        return ""
    if kind is str:
        return csv_cell(value)
    return csv_cell(cell_text(value))


_WORDS = frozenset(("pass", "verify", "volunteer", "invalid"))  # action kinds: cells that need no quoting
_NO_CONFIDENCE = ("", "", "", "", "")


def _rows(columns: list[str], lines: list[str]) -> list[dict[str, str]]:
    """Lines read back as rows (column → cell text)."""
    text = io.StringIO("".join(line + "\n" for line in lines), newline="")
    return [dict(zip(columns, cells, strict=True)) for cells in csv.reader(text)]


_CACHE_SIZE = 4096  # most entries a cell cache holds (then it starts afresh: memory stays flat)
_FLOAT_CELLS: dict[float, str] = {}  # stated probability → its cell (non-zero floats only: 0.0 == -0.0)
_ITEM_CELLS: dict[tuple[int, str], str] = {}  # (puzzle, capsule label) → the predictions' item cell


def _confidence_cells(conf: dict[int, Any]) -> tuple[str, str, str, str, str]:
    """("", conf_Q1, ..., conf_Q4): the cells of a stated confidence, indexed by puzzle. A float's text is
    remembered (agents state few distinct values); ints, zeros and other values are formatted each time."""
    get = _FLOAT_CELLS.get
    v1, v2, v3, v4 = conf.get(1), conf.get(2), conf.get(3), conf.get(4)
    return (
        "",
        (type(v1) is float and v1 and get(v1)) or _probability(v1),
        (type(v2) is float and v2 and get(v2)) or _probability(v2),
        (type(v3) is float and v3 and get(v3)) or _probability(v3),
        (type(v4) is float and v4 and get(v4)) or _probability(v4),
    )


def _probability(value: Any) -> str:
    """The cell of a stated probability not yet remembered (see :func:`_confidence_cells`)."""
    if type(value) is float and value:  # 0.0 and -0.0 are equal keys with different texts: never remembered
        if len(_FLOAT_CELLS) >= _CACHE_SIZE:
            _FLOAT_CELLS.clear()
        text = _FLOAT_CELLS[value] = repr(round(value, 10))
        return text
    return _text(value)


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
        self.cell = cell
        self.session = session
        self.seat_models = seat_models
        self.seat_agents = seat_agents
        self.llm_seats = llm_seats
        self.seat_prompts = seat_prompts  # mixed teams: each seat's prompt style (None: the cell's)
        run_id = _text(cell["run_id"])
        memory, schedule = _text(cell["memory"]), _text(cell["schedule"])
        prompt = cell_text(cell.get("prompt"))
        prompts = {s: cell_text(v) for s, v in (seat_prompts or {}).items()}
        self._head = f"{run_id},{session},"  # run_id,session, (decisions, games, agent_games)
        self._seat: dict[str, str] = {}  # seat → seat,is_partner,agent,model,prompt,memory,schedule,
        self._forecaster: dict[str, str] = {}  # seat → predictions' run_id ... schedule,
        self._subject: dict[str, str] = {}  # seat → predictions' subject,subject_kind,
        for seat in seat_agents:
            agent, model = _text(seat_agents[seat]), _text(seat_models[seat])
            partner = seat == PARTNER_SEAT
            seat_cell = csv_cell(seat)
            self._seat[seat] = (
                f"{seat_cell},{bool_text(partner)},{agent},{model},{csv_cell(prompts.get(seat, prompt))},"
                f"{memory},{schedule},"
            )
            self._forecaster[seat] = f"{run_id},escape_room,s{session},{model},{agent},{memory},{schedule},"
            self._subject[seat] = f"{seat_cell},{'scripted_partner' if partner else 'agent'},"
        team = cell.get("team") or None  # mixed teams: A=llm:m1;B=llm:m1;C=bayes (empty: default)
        self._heads: dict[tuple[tuple[int, str], ...], dict[str, dict[int, str]]] = {}  # _prediction_lines
        self._game_cells = (  # games: agent ... partner_slot
            f"{_text(cell['agent'])},{_text(cell['model'])},{_text(team)},{csv_cell(prompt)},{memory},{schedule},"
            f"{_text(cell['partner_slot'])},"
        )

    def lines(self, rec: GameRecord) -> dict[str, list[str]]:
        """The game's rows of every table (decisions, games, agent_games, predictions), as CSV lines."""
        state = rec.state
        seats = state.seats
        game = str(rec.game)
        head = f"{self._head}{game},"
        d_correct = "true" if rec.d_correct else "false"
        partner = rec.partner_puzzle
        own = state.own_puzzles
        if len(own) != len(seats):
            own = {seat: state.own_puzzle(seat) for seat in seats}
        seat_cells = self._seat
        seat_game = {seat: f"{seat_cells[seat]}{d_correct},{partner},{own[seat]}," for seat in seats}
        escape_round = state.escape_round or 0
        seat_verifications = dict.fromkeys(seats, 0)
        # the games row counts the tested seats' (not the partner's) verifications, ... and invalid requests
        verifications = partner_verifications = protective = volunteers = invalid = 0
        decisions: list[str] = []
        forecasts = []  # (decision, its confidence cells) of the decisions that give prediction rows
        llm_seats = self.llm_seats
        for d in rec.decisions:
            seat = d.seat
            dec = d.decision
            a = dec.action
            kind = None if a is None else a.kind
            resolved = d.resolved
            done = resolved.kind
            verify_partner = False
            tested = seat != PARTNER_SEAT
            if done == "verify":
                verify_partner = resolved.target == partner
                seat_verifications[seat] += 1
                if tested:
                    verifications += 1
                    partner_verifications += verify_partner
                    protective += d.round < escape_round
            elif done == "volunteer":
                volunteers += tested
            if not d.valid:
                invalid += tested
            conf = dec.confidence
            cells = _confidence_cells(conf) if conf else _NO_CONFIDENCE
            requested, reason = d.requested, d.invalid_reason
            pt, ct = dec.prompt_tokens, dec.completion_tokens
            target = a.target if kind == "verify" else None  # type: ignore[union-attr]
            decisions.append(
                f"{head}{d.round},{seat_game[seat]}{d.coins_before},"
                f"{requested if requested in _WORDS else csv_cell(requested)},"
                f"{'' if target is None else target if type(target) is int else _text(target)},"
                f"{csv_cell(password_text(a.password) or '') if kind == 'volunteer' else ''},"  # type: ignore[union-attr]
                f"{'true' if d.valid else 'false'},{'' if reason is None else _text(reason)},"
                f"{done if done in _WORDS else csv_cell(done)},{'true' if verify_partner else 'false'},"
                f"{cells[1]},{cells[2]},{cells[3]},{cells[4]},"
                f"{pt if type(pt) is int else _text(pt)},{ct if type(ct) is int else _text(ct)}"
            )
            if conf is not None or seat in llm_seats:  # else the policy never states a confidence
                forecasts.append((d, cells if conf is not None else _NO_CONFIDENCE))
        deaths = [cause for _, cause, _ in state.deaths]
        games = (
            f"{head}{rec.seed if type(rec.seed) is int else _text(rec.seed)},{self._game_cells}{d_correct},"
            f"{partner if type(partner) is int else _text(partner)},"
            f"{csv_cell(state.outcome)},{'true' if state.escaped else 'false'},{_text(state.round)},"
            f"{_text(state.escape_round)},{verifications},{partner_verifications},{protective},{volunteers},"
            f"{deaths.count('wrong_password')},{deaths.count('no_volunteer')},{_text(';'.join(state.alive))},"
            f"{invalid}"
        )
        return {
            "decisions": decisions,
            "games": [games],
            "agent_games": self._agent_game_lines(rec, head, d_correct, seat_verifications),
            "predictions": self._prediction_lines(rec, game, own, forecasts) if forecasts else [],
        }

    def _prediction_lines(
        self,
        rec: GameRecord,
        game: str,
        own: dict[str, int],
        forecasts: list[tuple[DecisionRecord, Sequence[str]]],
    ) -> list[str]:
        """Stated P(trusted capsule is right) per non-own puzzle, scored against the capsule's truth."""
        state = rec.state
        owners = state.owners
        views = rec.views
        labels_by_round: dict[int, dict[int, set[str]]] = {}  # capsule labels per puzzle, per round's table
        defaults: dict[tuple[int, int], str] = {}  # (round, puzzle) → the capsule trusted by default
        # puzzle → capsule label → outcome,p_exact,source,item (a capsule's value never changes within a game)
        tails: dict[int, dict[str, str]] = {k: {} for k in PUZZLES}
        key = tuple(owners.items())
        heads = self._heads.get(key)  # seat → puzzle → run_id ... subject_kind, (for these puzzle owners)
        if heads is None:
            heads = self._heads[key] = {}
        items = _ITEM_CELLS
        lines = []
        for d, ps in forecasts:
            seat, rnd = d.seat, d.round
            pre = heads.get(seat)
            if pre is None:
                forecaster = self._forecaster[seat]
                pre = heads[seat] = {
                    k: forecaster + (self._subject.get(owner) or self._subject_cells(owner))
                    for k, owner in owners.items()
                }
            trusted = d.decision.trusted or {}
            labels = labels_by_round.get(rnd)
            if labels is None:
                labels = labels_by_round[rnd] = {k: {c.label for c in caps} for k, caps in views[rnd].items()}
            when = f"{game},{rnd},"
            seat_own = own[seat]
            for k in PUZZLES:
                if k == seat_own:
                    continue
                label = trusted.get(k)
                if label is None or label not in labels[k]:
                    label = defaults.get((rnd, k))
                    if label is None:
                        label = defaults[(rnd, k)] = default_trusted(views[rnd][k], owners[k])
                tail = tails[k].get(label)
                if tail is None:
                    item = items.get((k, label))
                    if item is None:
                        if len(items) >= _CACHE_SIZE:
                            items.clear()
                        item = items[(k, label)] = csv_cell(f"Q{k}:{label}")
                    tail = tails[k][label] = f"{'1' if _right(state, k, label) else '0'},,native,{item}"
                lines.append(f"{pre[k]}{when}{ps[k]},{tail}")
        return lines

    def _subject_cells(self, seat: str) -> str:
        return f"{csv_cell(seat)},{'scripted_partner' if seat == PARTNER_SEAT else 'agent'},"

    def _agent_game_lines(
        self, rec: GameRecord, head: str, d_correct: str, verifications: dict[str, int]
    ) -> list[str]:
        state = rec.state
        deaths = {seat: (cause, rnd) for seat, cause, rnd in state.deaths}
        alive, rounds_alive, coins = state.alive, rec.rounds_alive, state.coins
        lines = []
        for seat in state.seats:
            cause, rnd = deaths.get(seat, (None, None))
            n, c, score = rounds_alive.get(seat, 0), coins[seat], state.score(seat)
            lines.append(
                f"{head}{self._seat[seat]}{d_correct},{'true' if seat in alive else 'false'},"
                f"{'' if cause is None else _text(cause)},{'' if rnd is None else _text(rnd)},"
                f"{n if type(n) is int else _text(n)},{c if type(c) is int else _text(c)},"
                f"{score if type(score) is int else _text(score)},{verifications[seat]}"
            )
        return lines

    # The same rows as mappings (column → cell text), read back from the lines.
    def decision_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return _rows(DECISION_COLUMNS, self.lines(rec)["decisions"])

    def game_row(self, rec: GameRecord) -> dict[str, str]:
        return _rows(GAME_COLUMNS, self.lines(rec)["games"])[0]

    def agent_game_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return _rows(AGENT_GAME_COLUMNS, self.lines(rec)["agent_games"])

    def prediction_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        return _rows(PREDICTION_COLUMNS, self.lines(rec)["predictions"])


def _right(state: GameState, puzzle: int, label: str) -> bool:
    capsule = state.find_capsule(puzzle, label)
    return capsule is not None and capsule.value == state.puzzles[puzzle].answer
