"""Score every decision of the seats under test: expected value of each legal action, regret, protective flag."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from analysis.yardstick.beliefs import Beliefs
from analysis.yardstick.model import (
    EPS,
    State,
    action_values,
    best_action,
    death_risk_pass,
    death_risk_volunteer,
    ev_volunteer,
)
from analysis.yardstick.traces import PARTNER, Capsule, GameTrace, RoundTrace, RunTrace, resolve_name

LABEL = "model-based yardstick, not the exact optimum of the game"
PUZZLES = (1, 2, 3, 4)
DECISION_COLUMNS = [
    "yardstick",
    "variant",
    "source",
    "run_id",
    "model",
    "agent",
    "schedule",
    "memory",
    "team",
    "session",
    "game",
    "round",
    "seat",
    "d_correct",
    "cluster",
    "coins",
    "alive",
    "rounds_left",
    "failed_passwords",
    "requested",
    "valid",
    "action",
    "target",
    *(f"p_Q{k}" for k in PUZZLES),
    "ev_pass",
    "ev_volunteer",
    *(f"ev_verify_Q{k}" for k in PUZZLES),
    "ev_chosen",
    "ev_best",
    "best_action",
    "regret",
    "death_risk_pass",
    "death_risk_volunteer",
    "verify_gain",
    "protective",
]


class _Seat:
    """What one seat can compute at the start of a round: each puzzle's status, its state under the model.

    A puzzle is *certain* when the seat owns it or a verifier vouched for one of its capsules, else
    *uncertain*: its only capsule is the owner's, right with the owner's reliability at the start of the game
    (``start``), conditioned on this game's failed passwords by the model.
    """

    def __init__(
        self,
        seat: str,
        start: dict[str, float],
        game: GameTrace,
        rnd: RoundTrace,
        failed: list[dict[int, str]],
    ) -> None:
        self.seat = seat
        self.game = game
        self.rnd = rnd
        probs: dict[int, float] = {}
        for k, caps in rnd.capsules.items():
            owner = game.owners[k]
            if owner == seat or any(_vouched(c, owner) for c in caps):
                probs[k] = 1.0
            else:
                probs[k] = start.get(owner, 0.5)
        constraints = [s for s in (self._constraint(f, probs) for f in failed) if s is not None]
        self.state = State.of(
            coins=max(int(rnd.coins.get(seat, 0)), 0),
            probs=probs,
            alive=max(len(rnd.alive), 1),
            rounds_left=max(game.max_rounds - rnd.number + 1, 1),
            failed=constraints,
        )

    def _status(self, k: int, capsule: Capsule) -> str:
        """``right``, ``wrong`` or ``uncertain`` for a capsule of puzzle k, as this seat sees it now."""
        caps = self.rnd.capsules[k]
        owner = self.game.owners[k]
        if owner == self.seat:
            return "right" if self.seat in capsule.endorsers else "wrong"
        if _vouched(capsule, owner):
            return "right"
        if any(_vouched(c, owner) for c in caps if c is not capsule):
            return "wrong"
        return "uncertain"

    def _constraint(self, password: dict[int, str], probs: dict[int, float]) -> list[int] | None:
        """The uncertain puzzles a failed password named (not all right), or None when it named a capsule now
        known to be wrong (which explains the failure)."""
        out = []
        for k, creator in password.items():
            capsule = next((c for c in self.rnd.capsules.get(k, []) if c.creator == creator), None)
            if capsule is None:
                return None
            status = self._status(k, capsule)
            if status == "wrong":
                return None
            if status == "uncertain" and probs.get(k, 1.0) < 1.0:
                out.append(k)
        return out

    def named(self, names: dict[int, str] | None, lenient: bool) -> tuple[list[int], bool]:
        """(the uncertain puzzles a password names, whether it names a capsule known to be wrong, misses a
        puzzle or names nothing)."""
        uncertain: list[int] = []
        for k in sorted(self.rnd.capsules):
            name = (names or {}).get(k)
            capsule = resolve_name(self.rnd.capsules[k], name, lenient) if name else None
            if capsule is None:
                return uncertain, True
            status = self._status(k, capsule)
            if status == "wrong":
                return uncertain, True
            if status == "uncertain":
                uncertain.append(k)
        return uncertain, False


def _vouched(capsule: Capsule, owner: str) -> bool:
    """A capsule someone other than the puzzle's owner opened or endorsed (verifiers are taken as exact)."""
    return any(e != owner for e in capsule.endorsers)


def _fmt(x: float) -> float:
    return round(float(x), 10)


def score_game(
    run: RunTrace, game: GameTrace, beliefs: dict[str, Beliefs], cluster: str, variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows for every decision of the tested seats in one game; updates ``beliefs`` with what each seat heard.
    Each row also holds its model state under the private key ``_state`` (for the Monte Carlo check)."""
    rows: list[dict[str, Any]] = []
    lenient = run.capsule_names != "exact"
    failed: list[dict[int, str]] = []
    start: dict[str, dict[str, float]] = {}
    for seat, b in beliefs.items():
        b.start_game()
        start[seat] = {s: b.reliability(s) for s in game.owners.values() if s != seat}
    for rnd in game.rounds:
        for choice in rnd.choices:
            seat = choice.seat
            if seat == PARTNER or seat not in beliefs:
                continue
            view = _Seat(seat, start[seat], game, rnd, failed)
            state = view.state
            own = next((k for k, s in game.owners.items() if s == seat), None)
            targets = [k for k in PUZZLES if k in rnd.capsules and (run.own_verify != "illegal" or k != own)]
            values = action_values(state, targets, variant)
            best_value = max(values.values())
            best = best_action(values)
            if choice.action == "volunteer":
                named, wrong = view.named(choice.names, lenient)
                chosen = ev_volunteer(state, named, wrong=wrong)
                risk_volunteer = death_risk_volunteer(state, named, wrong=wrong)
            else:
                key = f"verify:{choice.target}" if choice.action == "verify" else "pass"
                chosen = values.get(key, values["pass"])
                risk_volunteer = death_risk_volunteer(state)
            gain = math.nan
            protective: bool | None = None
            if choice.action == "verify":
                alternative = max(v for a, v in values.items() if not a.startswith("verify:"))
                gain = chosen - alternative
                protective = gain > EPS
            row = {
                "yardstick": LABEL,
                "variant": variant,
                "source": run.source,
                "run_id": run.run_id,
                "model": game.players.get(seat, (run.agent, run.model))[1],
                "agent": game.players.get(seat, (run.agent, run.model))[0],
                "schedule": run.schedule,
                "memory": run.memory,
                "team": run.team,
                "session": game.session,
                "game": game.game,
                "round": rnd.number,
                "seat": seat,
                "d_correct": game.d_correct,
                "cluster": cluster,
                "coins": state.coins,
                "alive": state.alive,
                "rounds_left": state.rounds_left,
                "failed_passwords": len(failed),
                "requested": choice.requested,
                "valid": choice.valid,
                "action": choice.action,
                "target": choice.target if choice.action == "verify" else None,
                "ev_pass": _fmt(values["pass"]),
                "ev_volunteer": _fmt(values["volunteer"]),
                "ev_chosen": _fmt(chosen),
                "ev_best": _fmt(best_value),
                "best_action": best.replace("verify:", "verify Q"),
                "regret": _fmt(max(best_value - chosen, 0.0)),
                "death_risk_pass": _fmt(death_risk_pass(state)),
                "death_risk_volunteer": _fmt(risk_volunteer),
                "verify_gain": _fmt(gain) if not math.isnan(gain) else None,
                "protective": protective,
            }
            for k in PUZZLES:
                row[f"p_Q{k}"] = _fmt(state.prob(k)) if k in rnd.capsules else None
                value = values.get(f"verify:{k}")
                row[f"ev_verify_Q{k}"] = _fmt(value) if value is not None else None
            row["_state"] = state
            rows.append(row)
        if rnd.password is not None and rnd.correct is False:
            failed.append(dict(rnd.password))
        for seat, b in beliefs.items():
            if seat in rnd.alive:  # a seat hears a round's announcement only if it was alive at its start
                b.observe(rnd, game.owners)
    for b in beliefs.values():
        b.end_game(game)
    return rows


def score_run(
    run: RunTrace, prior: tuple[float, float] = (1.0, 1.0), variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows for every decision of the run's tested seats (beliefs carried across a session's games unless
    the memory is ``none``). The cluster is the game for memoryless runs, the session otherwise."""
    rows: list[dict[str, Any]] = []
    sessions: dict[int, dict[str, Beliefs]] = {}
    for game in sorted(run.games, key=lambda g: (g.session, g.game)):
        seats = sorted({s for s in game.owners.values() if s != PARTNER})
        beliefs = sessions.setdefault(game.session, {s: Beliefs(s, prior) for s in seats})
        if run.memory == "none":
            for b in beliefs.values():
                b.forget()
        memoryless = run.memory == "none"
        cluster = f"{run.run_id}/s{game.session}" + (f"/g{game.game}" if memoryless else "")
        rows.extend(score_game(run, game, beliefs, cluster, variant))
    return rows


def score_runs(
    runs: Iterable[RunTrace], prior: tuple[float, float] = (1.0, 1.0), variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows of every run, in the given order."""
    out: list[dict[str, Any]] = []
    for run in runs:
        out.extend(score_run(run, prior, variant))
    return out
