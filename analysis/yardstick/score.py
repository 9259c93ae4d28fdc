"""Score every decision of the seats under test: expected value of each legal action, regret, protective flag,
under the model of :mod:`analysis.yardstick.model`."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from analysis.yardstick import montecarlo
from analysis.yardstick.beliefs import Posterior, View
from analysis.yardstick.evidence import PUZZLES, before, bit, heard
from analysis.yardstick.model import (
    EPS,
    MODEL_VERSION,
    PASS,
    TESTED,
    VOLUNTEER,
    GameTable,
    RoundState,
    SeatModel,
    best_action,
    simplify,
)
from analysis.yardstick.traces import PARTNER, Choice, GameTrace, RoundTrace, RunTrace, resolve_name

LABEL = "model-based yardstick, not the exact optimum of the game"
SYMMETRIC = "symmetric"
"""The variant whose teammates play the benchmark's own fixed point (:mod:`analysis.yardstick.symmetric`)."""
DECISION_COLUMNS = [
    "yardstick",
    "model_version",
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
    "p_teammate_volunteers",
    "verify_gain",
    "protective",
]

Simulate = Callable[[str, int, np.random.Generator], tuple[float, float]]
"""``simulate(action, n, rng) -> (mean score, standard error)``: the Monte Carlo check of one decision."""


@dataclass
class Scored:
    """One decision under a model: its state's figures, every legal action's value and the chosen one's."""

    coins: int
    alive: int
    rounds_left: int
    probs: dict[int, float]  # puzzle → P(the best capsule the seat can name is right)
    values: dict[str, float]  # ``pass``, ``volunteer``, ``verify:k`` → expected score
    chosen: float
    death_risk_pass: float
    death_risk_volunteer: float
    p_teammate_volunteers: float
    simulate: Simulate


def _fmt(x: float) -> float:
    return round(float(x), 10)


def decision_row(
    run: RunTrace,
    game: GameTrace,
    rnd: RoundTrace,
    choice: Choice,
    *,
    cluster: str,
    variant: str,
    failed_passwords: int,
    scored: Scored,
) -> dict[str, Any]:
    """A ``decisions.csv`` row (with the private key ``_check``: the :class:`Scored`, for the Monte Carlo
    check)."""
    values = scored.values
    best_value = max(values.values())
    gain = math.nan
    protective: bool | None = None
    if choice.action == "verify":
        alternative = max(v for a, v in values.items() if not a.startswith("verify:"))
        gain = scored.chosen - alternative
        protective = gain > EPS
    agent, model = game.players.get(choice.seat, (run.agent, run.model))
    row = {
        "yardstick": LABEL,
        "model_version": MODEL_VERSION,
        "variant": variant,
        "source": run.source,
        "run_id": run.run_id,
        "model": model,
        "agent": agent,
        "schedule": run.schedule,
        "memory": run.memory,
        "team": run.team,
        "session": game.session,
        "game": game.game,
        "round": rnd.number,
        "seat": choice.seat,
        "d_correct": game.d_correct,
        "cluster": cluster,
        "coins": scored.coins,
        "alive": scored.alive,
        "rounds_left": scored.rounds_left,
        "failed_passwords": failed_passwords,
        "requested": choice.requested,
        "valid": choice.valid,
        "action": choice.action,
        "target": choice.target if choice.action == "verify" else None,
        "ev_pass": _fmt(values[PASS]),
        "ev_volunteer": _fmt(values[VOLUNTEER]),
        "ev_chosen": _fmt(scored.chosen),
        "ev_best": _fmt(best_value),
        "best_action": best_action(values).replace("verify:", "verify Q"),
        "regret": _fmt(max(best_value - scored.chosen, 0.0)),
        "death_risk_pass": _fmt(scored.death_risk_pass),
        "death_risk_volunteer": _fmt(scored.death_risk_volunteer),
        "p_teammate_volunteers": _fmt(scored.p_teammate_volunteers),
        "verify_gain": _fmt(gain) if not math.isnan(gain) else None,
        "protective": protective,
    }
    for k in PUZZLES:
        p = scored.probs.get(k)
        row[f"p_Q{k}"] = _fmt(p) if p is not None else None
        value = values.get(f"verify:{k}")
        row[f"ev_verify_Q{k}"] = _fmt(value) if value is not None else None
    row["_check"] = scored
    return row


# -- v2 ------------------------------------------------------------------------------------------------------
def round_state(game: GameTrace, rnd: RoundTrace) -> RoundState:
    """The public state at the start of ``rnd`` (its verdicts and failed passwords come from the
    announcements of the game's earlier rounds)."""
    evidence = before(game, rnd.number)
    verified = truth = 0
    for k, right in evidence.verdicts.items():
        verified |= bit(k)
        truth |= bit(k) if right else 0
    failed = [need for need, right in evidence.passwords if not right]
    alive = frozenset(rnd.alive)
    a, b, c = (max(int(rnd.coins.get(s, 0)), 0) if s in alive else 0 for s in TESTED)
    return RoundState(
        rounds_left=max(game.max_rounds - rnd.number + 1, 1),
        alive=alive,
        coins=(a, b, c),
        verified=verified,
        truth=truth,
        failed=simplify(failed, verified, truth),
    )


def names_wrong(
    model: SeatModel, state: RoundState, rnd: RoundTrace, names: dict[int, str] | None, lenient: bool
) -> bool:
    """Whether a password names a capsule the seat knows to be wrong, or misses a puzzle (it cannot be
    right); otherwise it is the best password (an unverified puzzle has only its original capsule)."""
    for k in sorted(rnd.capsules):
        name = (names or {}).get(k)
        capsule = resolve_name(rnd.capsules[k], name, lenient) if name else None
        if capsule is None:
            return True
        original = capsule.creator == model.owners[k]
        if state.verified & bit(k):
            if original != bool(state.truth & bit(k)):
                return True
        elif not original:  # an unverified puzzle's other capsules (an owner's own check opens none)
            return True
    return False


class DecisionTable(Protocol):
    """What scoring asks of a game's table: a :class:`GameTable`, or the symmetric benchmark's game."""

    def seat_for(self, seat: str, state: RoundState) -> SeatModel | str: ...


class ModelCache:
    """The last few :class:`GameTable` s by (owners, views, variant): games whose seats hold the same views
    (memoryless runs: the prior) share their values."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._tables: OrderedDict[tuple[Any, ...], DecisionTable] = OrderedDict()

    def get(self, owners: dict[int, str], views: dict[str, View], variant: str) -> DecisionTable:
        key = (tuple(sorted(owners.items())), tuple(sorted(views.items())), variant)
        table = self._tables.get(key)
        if table is None:
            if variant == SYMMETRIC:
                from analysis.yardstick.symmetric import SymmetricGame

                table = self._tables[key] = SymmetricGame(owners, views)
            else:
                table = self._tables[key] = GameTable(owners, views, variant)
            if len(self._tables) > self.size:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return table


def unscored_row(
    run: RunTrace,
    game: GameTrace,
    rnd: RoundTrace,
    choice: Choice,
    cluster: str,
    variant: str,
    failed: int,
    state: RoundState,
    reason: str,
) -> dict[str, Any]:
    """A decision the variant cannot value (no fixed point): the state and the choice, no values, the reason
    in ``best_action``."""
    none = Scored(0, 0, 0, {}, {PASS: 0.0, VOLUNTEER: 0.0}, 0.0, 0.0, 0.0, 0.0, lambda a, n, r: (0.0, 0.0))
    row = decision_row(
        run, game, rnd, choice, cluster=cluster, variant=variant, failed_passwords=failed, scored=none
    )
    values = [
        c
        for c in DECISION_COLUMNS
        if c.startswith(("ev_", "p_Q", "death_risk")) or c in ("regret", "verify_gain")
    ]
    row.update(dict.fromkeys(values), p_teammate_volunteers=None, protective=None, best_action=reason)
    row.update(
        coins=state.coins[TESTED.index(choice.seat)], alive=len(state.alive), rounds_left=state.rounds_left
    )
    row["_check"] = Scored(0, 0, 0, {}, {}, 0.0, 0.0, 0.0, 0.0, lambda a, n, r: (0.0, 0.0))
    return row


def score_decision(
    model: SeatModel, state: RoundState, rnd: RoundTrace, choice: Choice, targets: list[int], lenient: bool
) -> Scored:
    """One decision of ``model.seat`` under the v2 model."""
    values = model.action_values(state, targets)
    if choice.action == "volunteer":
        wrong = names_wrong(model, state, rnd, choice.names, lenient)
        chosen = model.ev_volunteer(state, wrong=wrong)
        risk_volunteer = model.death_risk(state, "volunteer_wrong" if wrong else VOLUNTEER)
    else:
        key = f"verify:{choice.target}" if choice.action == "verify" else PASS
        chosen = values.get(key, values[PASS])
        risk_volunteer = model.death_risk(state, VOLUNTEER)
    return Scored(
        coins=state.coins[TESTED.index(model.seat)],
        alive=len(state.alive),
        rounds_left=state.rounds_left,
        probs={k: model.prob(state, k) for k in PUZZLES if k in rnd.capsules},
        values=values,
        chosen=chosen,
        death_risk_pass=model.death_risk(state, PASS),
        death_risk_volunteer=risk_volunteer,
        p_teammate_volunteers=model.p_teammate_volunteers(state),
        simulate=lambda action, n, rng: montecarlo.simulate(model, state, action, n=n, rng=rng),
    )


def score_game(
    run: RunTrace,
    game: GameTrace,
    views: dict[str, View],
    cluster: str,
    variant: str = "team",
    cache: ModelCache | None = None,
) -> list[dict[str, Any]]:
    """Rows for every decision of the tested seats in one game (``views``: each tested seat's view at its
    start)."""
    table = (cache or ModelCache()).get(game.owners, views, variant)
    rows: list[dict[str, Any]] = []
    lenient = run.capsule_names != "exact"
    failed = 0
    for rnd in game.rounds:
        state = None
        for choice in rnd.choices:
            seat = choice.seat
            if seat == PARTNER or seat not in views or seat not in rnd.alive:
                continue
            state = state or round_state(game, rnd)
            model = table.seat_for(seat, state)
            if isinstance(model, str):  # the symmetric benchmark found no fixed point: no value, the reason
                rows.append(unscored_row(run, game, rnd, choice, cluster, variant, failed, state, model))
                continue
            targets = [
                k for k in PUZZLES if k in rnd.capsules and (run.own_verify != "illegal" or k != model.own)
            ]
            scored = score_decision(model, state, rnd, choice, targets, lenient)
            rows.append(
                decision_row(
                    run,
                    game,
                    rnd,
                    choice,
                    cluster=cluster,
                    variant=variant,
                    failed_passwords=failed,
                    scored=scored,
                )
            )
        if rnd.password is not None and rnd.correct is False:
            failed += 1
    return rows


def cluster_of(run: RunTrace, game: GameTrace) -> str:
    """The bootstrap cluster: the game for memoryless runs, the session otherwise."""
    memoryless = run.memory == "none"
    return f"{run.run_id}/s{game.session}" + (f"/g{game.game}" if memoryless else "")


def score_run(
    run: RunTrace,
    prior: tuple[float, float] = (1.0, 1.0),
    variant: str = "team",
    cache: ModelCache | None = None,
) -> list[dict[str, Any]]:
    """Rows for every decision of the run's tested seats; each seat's exact posterior carries across its
    session's games unless the memory is ``none``."""
    cache = cache or ModelCache()
    rows: list[dict[str, Any]] = []
    sessions: dict[int, dict[str, Posterior]] = {}
    for game in sorted(run.games, key=lambda g: (g.session, g.game)):
        seats = sorted(s for s in game.owners.values() if s != PARTNER)
        posteriors = sessions.setdefault(game.session, {s: Posterior(s, prior) for s in seats})
        if run.memory == "none":
            for p in posteriors.values():
                p.forget()
        views = {s: p.view(game.owners) for s, p in posteriors.items()}
        rows.extend(score_game(run, game, views, cluster_of(run, game), variant, cache))
        for seat, p in posteriors.items():
            p.add_game(game.owners, heard(game, seat).facts())
    return rows


def score_runs(
    runs: Iterable[RunTrace],
    prior: tuple[float, float] = (1.0, 1.0),
    variant: str = "team",
) -> list[dict[str, Any]]:
    """Rows of every run, in the given order."""
    cache = ModelCache()
    return [row for run in runs for row in score_run(run, prior, variant, cache)]
