"""Rows of the escape-room tables (decisions, games, agent_games, predictions) from finished games."""

from __future__ import annotations

from typing import Any

from games.escape_room.model import GameRecord
from games.escape_room.options import PARTNER_SEAT
from games.escape_room.rules import GameState
from games.escape_room.types import CapsuleView
from trustsim.rundir import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the one schema, re-exported
from trustsim.rundir.writer import bool_text, cell_text

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
    return ";".join(f"Q{k}={password[k]}" for k in sorted(password))


def default_trusted(capsules: tuple[CapsuleView, ...], owner: str) -> str:
    """The capsule a seat would trust by default: most endorsers, preferring one a non-owner endorsed."""
    best = max(capsules, key=lambda c: (len(c.endorsers), any(e != owner for e in c.endorsers)))
    return best.label


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
        self._prompts = {s: cell_text(v) for s, v in (seat_prompts or {}).items()}
        self._seat_texts: dict[str, tuple[str, str, str, str]] = {}
        self._text = (  # run_id, session, prompt, memory, schedule as cell text
            cell_text(cell["run_id"]),
            str(session),
            cell_text(cell.get("prompt")),
            cell_text(cell["memory"]),
            cell_text(cell["schedule"]),
        )

    def _seat_text(self, seat: str) -> tuple[str, str, str, str]:
        """(seat, is_partner, agent, model) as cell text, computed once per seat."""
        text = self._seat_texts.get(seat)
        if text is None:
            text = self._seat_texts[seat] = (
                seat,
                bool_text(seat == PARTNER_SEAT),
                cell_text(self.seat_agents[seat]),
                cell_text(self.seat_models[seat]),
            )
        return text

    def decision_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        """One row per decision, as cell text (the writer's fast path; same cells as typed values give)."""
        state = rec.state
        run_id, session, prompt, memory, schedule = self._text
        game = str(rec.game)
        d_correct = bool_text(rec.d_correct)
        partner = rec.partner_puzzle
        partner_text = str(partner)
        own = {seat: str(state.own_puzzle(seat)) for seat in state.seats}
        rows = []
        for d in rec.decisions:
            a = d.decision.action
            conf = d.decision.confidence or {}
            seat, is_partner, agent, model = self._seat_text(d.seat)
            resolved = d.resolved
            verify = a is not None and a.kind == "verify"
            volunteer = a is not None and a.kind == "volunteer"
            rows.append(
                {
                    "run_id": run_id,
                    "session": session,
                    "game": game,
                    "round": str(d.round),
                    "seat": seat,
                    "is_partner": is_partner,
                    "agent": agent,
                    "model": model,
                    "prompt": self._prompts.get(seat, prompt),
                    "memory": memory,
                    "schedule": schedule,
                    "d_correct": d_correct,
                    "partner_puzzle": partner_text,
                    "own_puzzle": own[seat],
                    "coins_before": str(d.coins_before),
                    "action": d.requested,
                    "target": cell_text(a.target) if verify else "",  # type: ignore[union-attr]
                    "password": (password_text(a.password) or "") if volunteer else "",  # type: ignore[union-attr]
                    "valid": bool_text(d.valid),
                    "invalid_reason": cell_text(d.invalid_reason),
                    "resolved_action": resolved.kind,
                    "verify_partner": bool_text(resolved.kind == "verify" and resolved.target == partner),
                    "conf_Q1": cell_text(conf.get(1)),
                    "conf_Q2": cell_text(conf.get(2)),
                    "conf_Q3": cell_text(conf.get(3)),
                    "conf_Q4": cell_text(conf.get(4)),
                    "prompt_tokens": cell_text(d.decision.prompt_tokens),
                    "completion_tokens": cell_text(d.decision.completion_tokens),
                }
            )
        return rows

    def game_row(self, rec: GameRecord) -> dict[str, str]:
        """The game's row, as cell text."""
        state = rec.state
        t = cell_text
        run_id, session, prompt, memory, schedule = self._text
        tested = [d for d in rec.decisions if d.seat != PARTNER_SEAT]
        verifies = [d for d in tested if d.resolved.kind == "verify"]
        escape_round = state.escape_round
        causes = [c for _, c, _ in state.deaths]
        cell = self.cell
        return {
            "run_id": run_id,
            "session": session,
            "game": str(rec.game),
            "seed": t(rec.seed),
            "agent": t(cell["agent"]),
            "model": t(cell["model"]),
            "team": t(cell.get("team") or None),  # mixed teams: A=llm:m1;B=llm:m1;C=bayes (empty: default)
            "prompt": prompt,
            "memory": memory,
            "schedule": schedule,
            "partner_slot": t(cell["partner_slot"]),
            "d_correct": bool_text(rec.d_correct),
            "partner_puzzle": t(rec.partner_puzzle),
            "outcome": state.outcome,
            "escaped": bool_text(state.escaped),
            "rounds": t(state.round),
            "escape_round": t(escape_round),
            "verifications": str(len(verifies)),
            "partner_verifications": str(sum(d.resolved.target == rec.partner_puzzle for d in verifies)),
            "protective_verifications": str(
                sum(d.round < escape_round for d in verifies) if escape_round else 0
            ),
            "volunteers": str(sum(d.resolved.kind == "volunteer" for d in tested)),
            "deaths_wrong_password": str(causes.count("wrong_password")),
            "deaths_no_volunteer": str(causes.count("no_volunteer")),
            "survivors": t(";".join(state.alive)),
            "invalid": str(sum(not d.valid for d in tested)),
        }

    def agent_game_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        """One row per seat, as cell text."""
        state = rec.state
        t = cell_text
        run_id, session, prompt, memory, schedule = self._text
        game, d_correct = str(rec.game), bool_text(rec.d_correct)
        deaths = {seat: (cause, rnd) for seat, cause, rnd in state.deaths}
        verifications = dict.fromkeys(state.seats, 0)
        for d in rec.decisions:
            if d.resolved.kind == "verify":
                verifications[d.seat] += 1
        rows = []
        for seat in state.seats:
            cause, rnd = deaths.get(seat, (None, None))
            seat_text, is_partner, agent, model = self._seat_text(seat)
            rows.append(
                {
                    "run_id": run_id,
                    "session": session,
                    "game": game,
                    "seat": seat_text,
                    "is_partner": is_partner,
                    "agent": agent,
                    "model": model,
                    "prompt": self._prompts.get(seat, prompt),  # mixed teams: the seat's own style
                    "memory": memory,
                    "schedule": schedule,
                    "d_correct": d_correct,
                    "survived": bool_text(seat in state.alive),
                    "death_cause": t(cause),
                    "death_round": t(rnd),
                    "rounds_alive": t(rec.rounds_alive.get(seat, 0)),
                    "coins": t(state.coins[seat]),
                    "score": t(state.score(seat)),
                    "verifications": str(verifications[seat]),
                }
            )
        return rows

    def prediction_rows(self, rec: GameRecord) -> list[dict[str, str]]:
        """Stated P(trusted capsule is right) per non-own puzzle, scored against the capsule's truth (rows as
        cell text)."""
        state = rec.state
        run_id, _, _, memory, schedule = self._text
        cluster = f"s{self.session}"
        game = str(rec.game)
        labels_by_round: dict[int, dict[int, set[str]]] = {}  # capsule labels per puzzle, per round's table
        truth: dict[tuple[int, str], str] = {}  # (puzzle, label) → outcome text; capsule values never change
        rows = []
        for d in rec.decisions:
            conf = d.decision.confidence
            if conf is None and d.seat not in self.llm_seats:
                continue  # this policy never states a confidence
            own = state.own_puzzle(d.seat)
            trusted = d.decision.trusted or {}
            views = rec.views[d.round]
            labels = labels_by_round.get(d.round)
            if labels is None:
                labels = labels_by_round[d.round] = {k: {c.label for c in caps} for k, caps in views.items()}
            _, _, agent, model = self._seat_text(d.seat)
            round_text = str(d.round)
            for k in PUZZLES:
                if k == own:
                    continue
                owner = state.owners[k]
                label = trusted.get(k)
                if label is None or label not in labels[k]:
                    label = default_trusted(views[k], owner)
                right = truth.get((k, label))
                if right is None:
                    right = truth[(k, label)] = "1" if _right(state, k, label) else "0"
                rows.append(
                    {
                        "run_id": run_id,
                        "game_type": "escape_room",
                        "cluster": cluster,
                        "model": model,
                        "agent": agent,
                        "memory": memory,
                        "schedule": schedule,
                        "subject": owner,
                        "subject_kind": "scripted_partner" if owner == PARTNER_SEAT else "agent",
                        "game": game,
                        "round": round_text,
                        "p": "" if conf is None else cell_text(conf.get(k)),
                        "outcome": right,
                        "p_exact": "",
                        "source": "native",
                        "item": f"Q{k}:{label}",
                    }
                )
        return rows


def _right(state: GameState, puzzle: int, label: str) -> bool:
    capsule = state.find_capsule(puzzle, label)
    return capsule is not None and capsule.value == state.puzzles[puzzle].answer
