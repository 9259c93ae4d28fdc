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
    "session",
    "game",
    "round",
    "seat",
    "d_correct",
    "cluster",
    "coins",
    "alive",
    "rounds_left",
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


def _best(capsules: list[Capsule], probs: list[float]) -> int:
    """Index of the most probable capsule (the first on ties)."""
    return max(range(len(capsules)), key=lambda i: (probs[i], -i))


class _Seat:
    """What one seat can compute at the start of a round: capsule probabilities, its state, its password."""

    def __init__(
        self, beliefs: Beliefs, game: GameTrace, rnd: RoundTrace, failed: list[dict[int, str]]
    ) -> None:
        self.beliefs = beliefs
        self.game = game
        self.rnd = rnd
        self.failed = failed
        self.probs: dict[int, list[float]] = {}
        for k, caps in rnd.capsules.items():
            owner = game.owners[k]
            self.probs[k] = [beliefs.capsule_prob(caps, c, owner) for c in caps]
        self.best = {k: _best(rnd.capsules[k], self.probs[k]) for k in rnd.capsules}
        best_creators = {k: rnd.capsules[k][i].creator for k, i in self.best.items()}
        best_probs = {k: self.probs[k][i] for k, i in self.best.items()}
        # A password that already failed this game: if only one of its capsules was uncertain, that one was wrong.
        if best_creators in failed:
            uncertain = [k for k, p in best_probs.items() if p < 1.0]
            if len(uncertain) == 1:
                best_probs[uncertain[0]] = 0.0
        self.best_probs = best_probs
        self.best_creators = best_creators

    def state(self, seat: str) -> State:
        return State(
            coins=max(int(self.rnd.coins.get(seat, 0)), 0),
            probs=tuple(self.best_probs.get(k, 1.0) for k in PUZZLES if k in self.rnd.capsules),
            alive=max(len(self.rnd.alive), 1),
            rounds_left=max(self.game.max_rounds - self.rnd.number + 1, 1),
        )

    def named_probs(self, names: dict[int, str] | None, lenient: bool) -> list[float]:
        """Probabilities of the capsules a password names (0 for a puzzle it misses or a name that selects
        nothing); 0 overall for a password that already failed this game."""
        out: list[float] = []
        creators: dict[int, str] = {}
        for k in sorted(self.rnd.capsules):
            caps = self.rnd.capsules[k]
            capsule = resolve_name(caps, (names or {}).get(k, ""), lenient) if names and k in names else None
            if capsule is None:
                out.append(0.0)
                continue
            creators[k] = capsule.creator
            i = caps.index(capsule)
            out.append(self.best_probs[k] if i == self.best[k] else self.probs[k][i])
        if creators in self.failed:
            return [0.0]
        return out


def _fmt(x: float) -> float:
    return round(float(x), 10)


def score_game(
    run: RunTrace, game: GameTrace, beliefs: dict[str, Beliefs], cluster: str, variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows for every decision of the tested seats in one game; updates ``beliefs`` with what each seat heard."""
    rows: list[dict[str, Any]] = []
    lenient = run.capsule_names != "exact"
    failed: list[dict[int, str]] = []
    for b in beliefs.values():
        b.start_game()
    for rnd in game.rounds:
        for choice in rnd.choices:
            seat = choice.seat
            if seat == PARTNER or seat not in beliefs:
                continue
            view = _Seat(beliefs[seat], game, rnd, failed)
            state = view.state(seat)
            own = next((k for k, s in game.owners.items() if s == seat), None)
            targets = [k for k in PUZZLES if k in rnd.capsules and (run.own_verify != "illegal" or k != own)]
            values = action_values(state, can_verify=targets, variant=variant)
            best_value = max(values.values())
            best = best_action(values)
            if choice.action == "volunteer":
                named = view.named_probs(choice.names, lenient)
                chosen = ev_volunteer(state, named)
                risk_volunteer = death_risk_volunteer(named)
            else:
                key = f"verify:{choice.target}" if choice.action == "verify" else "pass"
                chosen = values.get(key, values["pass"])
                risk_volunteer = death_risk_volunteer(state.probs)
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
                "model": run.model,
                "agent": run.agent,
                "schedule": run.schedule,
                "memory": run.memory,
                "session": game.session,
                "game": game.game,
                "round": rnd.number,
                "seat": seat,
                "d_correct": game.d_correct,
                "cluster": cluster,
                "coins": state.coins,
                "alive": state.alive,
                "rounds_left": state.rounds_left,
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
                row[f"p_Q{k}"] = _fmt(view.best_probs[k]) if k in view.best_probs else None
                value = values.get(f"verify:{k}")
                row[f"ev_verify_Q{k}"] = _fmt(value) if value is not None else None
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
