"""Rows of the escape-room tables (decisions, games, agent_games, predictions) from finished games."""

from __future__ import annotations

from typing import Any

from games.escape_room.model import GameRecord
from games.escape_room.options import PARTNER_SEAT
from games.escape_room.rules import GameState
from games.escape_room.types import CapsuleView
from trustsim.rundir import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the one schema, re-exported

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
    ) -> None:
        self.cell = cell
        self.session = session
        self.seat_models = seat_models
        self.seat_agents = seat_agents
        self.llm_seats = llm_seats

    def _base(self, game: int) -> dict[str, Any]:
        return {"run_id": self.cell["run_id"], "session": self.session, "game": game}

    def decision_rows(self, rec: GameRecord) -> list[dict[str, Any]]:
        state = rec.state
        rows = []
        for d in rec.decisions:
            a = d.decision.action
            conf = d.decision.confidence or {}
            row = self._base(rec.game)
            row.update(
                round=d.round,
                seat=d.seat,
                is_partner=d.seat == PARTNER_SEAT,
                agent=self.seat_agents[d.seat],
                model=self.seat_models[d.seat],
                prompt=self.cell.get("prompt"),
                memory=self.cell["memory"],
                schedule=self.cell["schedule"],
                d_correct=rec.d_correct,
                partner_puzzle=rec.partner_puzzle,
                own_puzzle=state.own_puzzle(d.seat),
                coins_before=d.coins_before,
                action=d.requested,
                target=a.target if a is not None and a.kind == "verify" else None,
                password=password_text(a.password) if a is not None and a.kind == "volunteer" else None,
                valid=d.valid,
                invalid_reason=d.invalid_reason,
                resolved_action=d.resolved.kind,
                verify_partner=d.resolved.kind == "verify" and d.resolved.target == rec.partner_puzzle,
                prompt_tokens=d.decision.prompt_tokens,
                completion_tokens=d.decision.completion_tokens,
            )
            for k in PUZZLES:
                row[f"conf_Q{k}"] = conf.get(k)
            rows.append(row)
        return rows

    def game_row(self, rec: GameRecord) -> dict[str, Any]:
        state = rec.state
        tested = [d for d in rec.decisions if d.seat != PARTNER_SEAT]
        verifies = [d for d in tested if d.resolved.kind == "verify"]
        escape_round = state.escape_round
        causes = [c for _, c, _ in state.deaths]
        row = self._base(rec.game)
        row.update(
            seed=rec.seed,
            agent=self.cell["agent"],
            model=self.cell["model"],
            team=self.cell.get("team") or None,  # mixed teams: A=llm:m1;B=llm:m1;C=bayes (empty: default)
            prompt=self.cell.get("prompt"),
            memory=self.cell["memory"],
            schedule=self.cell["schedule"],
            partner_slot=self.cell["partner_slot"],
            d_correct=rec.d_correct,
            partner_puzzle=rec.partner_puzzle,
            outcome=state.outcome,
            escaped=state.escaped,
            rounds=state.round,
            escape_round=escape_round,
            verifications=len(verifies),
            partner_verifications=sum(d.resolved.target == rec.partner_puzzle for d in verifies),
            protective_verifications=sum(d.round < escape_round for d in verifies) if escape_round else 0,
            volunteers=sum(d.resolved.kind == "volunteer" for d in tested),
            deaths_wrong_password=causes.count("wrong_password"),
            deaths_no_volunteer=causes.count("no_volunteer"),
            survivors=";".join(state.alive),
            invalid=sum(not d.valid for d in tested),
        )
        return row

    def agent_game_rows(self, rec: GameRecord) -> list[dict[str, Any]]:
        state = rec.state
        deaths = {seat: (cause, rnd) for seat, cause, rnd in state.deaths}
        rows = []
        for seat in state.seats:
            cause, rnd = deaths.get(seat, (None, None))
            row = self._base(rec.game)
            row.update(
                seat=seat,
                is_partner=seat == PARTNER_SEAT,
                agent=self.seat_agents[seat],
                model=self.seat_models[seat],
                prompt=self.cell.get("prompt"),
                memory=self.cell["memory"],
                schedule=self.cell["schedule"],
                d_correct=rec.d_correct,
                survived=seat in state.alive,
                death_cause=cause,
                death_round=rnd,
                rounds_alive=rec.rounds_alive.get(seat, 0),
                coins=state.coins[seat],
                score=state.score(seat),
                verifications=sum(d.seat == seat and d.resolved.kind == "verify" for d in rec.decisions),
            )
            rows.append(row)
        return rows

    def prediction_rows(self, rec: GameRecord) -> list[dict[str, Any]]:
        """Stated P(trusted capsule is right) per non-own puzzle, scored against the capsule's truth."""
        state = rec.state
        rows = []
        for d in rec.decisions:
            conf = d.decision.confidence
            if conf is None and d.seat not in self.llm_seats:
                continue  # this policy never states a confidence
            own = state.own_puzzle(d.seat)
            trusted = d.decision.trusted or {}
            views = rec.views[d.round]
            for k in PUZZLES:
                if k == own:
                    continue
                owner = state.owners[k]
                label = trusted.get(k)
                if label is None or all(c.label != label for c in views[k]):
                    label = default_trusted(views[k], owner)
                rows.append(
                    {
                        "run_id": self.cell["run_id"],
                        "game_type": "escape_room",
                        "cluster": f"s{self.session}",
                        "model": self.seat_models[d.seat],
                        "agent": self.seat_agents[d.seat],
                        "memory": self.cell["memory"],
                        "schedule": self.cell["schedule"],
                        "subject": owner,
                        "subject_kind": "scripted_partner" if owner == PARTNER_SEAT else "agent",
                        "game": rec.game,
                        "round": d.round,
                        "p": None if conf is None else conf.get(k),
                        "outcome": int(_right(state, k, label)),
                        "p_exact": None,
                        "source": "native",
                        "item": f"Q{k}:{label}",
                    }
                )
        return rows


def _right(state: GameState, puzzle: int, label: str) -> bool:
    capsule = state.find_capsule(puzzle, label)
    return capsule is not None and capsule.value == state.puzzles[puzzle].answer
