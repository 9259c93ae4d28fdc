"""The yardstick's values agree with a brute force on the engine's rules (every world, every draw, every
teammate's mixed move, the seat's expectimax over information sets) to 1e-9, in small games."""

from __future__ import annotations

import random

import numpy as np
import pytest

from analysis.yardstick.model import GameTable
from analysis.yardstick.score import round_state
from analysis.yardstick.traces import Capsule, GameTrace, RoundTrace, Verification
from games.escape_room.rules import GameState, resolve_round
from games.escape_room.types import Action, RoundReport
from tests.yardstick.brute_force import TESTED, Branch, BruteForce, best_password, bit, engine_game

OWNERS = {1: "A", 2: "B", 3: "C", 4: "D"}


def random_view(rng: np.random.Generator, own: int) -> tuple[float, ...]:
    """A correlated joint over the worlds (own original right), every world possible."""
    weights = [float(rng.uniform(0.05, 1.0)) if w & bit(own) else 0.0 for w in range(16)]
    total = sum(weights)
    return tuple(p / total for p in weights)


def trace_round(state: GameState, number: int) -> RoundTrace:
    """The public state at the start of round ``number`` as the yardstick's traces hold it."""
    capsules = {
        k: [Capsule(c.label, c.endorsers[0], list(c.endorsers)) for c in caps]
        for k, caps in state.capsules.items()
    }
    return RoundTrace(number=number, alive=list(state.alive), coins=dict(state.coins), capsules=capsules)


def add_report(rnd: RoundTrace, report: RoundReport) -> None:
    for v in report.verifications:
        creator = v.capsule.split("-")[1].rstrip("0123456789")
        rnd.verifications.append(Verification(v.seat, v.puzzle, creator, v.created))
    if report.password is not None:
        rnd.password = {k: label.split("-")[1] for k, label in report.password.items()}
        rnd.correct = report.password_correct


Prefix = list[tuple[dict[str, str | int | Action], int]]
"""Rounds played before the decision: the seats' moves ('pass', 'volunteer' with the best password, a puzzle
to verify, or an engine action) and the draw (index into the volunteers, else into the live seats)."""


def scenario(
    views: dict[str, tuple[float, ...]],
    seat: str,
    coins: int,
    max_rounds: int,
    prefix: Prefix,
    observed: int,
    owners: dict[int, str] = OWNERS,
) -> tuple[list[Branch], list[RoundReport], GameTrace, RoundTrace]:
    """The seat's information set after ``prefix`` as played in world ``observed`` (the worlds its view allows
    that announce the same), and the game's trace up to the decision round."""
    branches = [
        Branch(w, p, engine_game(w, owners, coins, max_rounds)) for w, p in enumerate(views[seat]) if p > 0
    ]
    game = GameTrace(session=0, game=1, d_correct=True, owners=owners, max_rounds=max_rounds)
    history: list[RoundReport] = []
    for number, (plan, pick) in enumerate(prefix, start=1):
        rnd = trace_round(branches[0].state, number)
        kept = []
        reference = None
        for b in sorted(branches, key=lambda b: b.world != observed):
            moves = {}
            for s, m in plan.items():
                if isinstance(m, Action):
                    moves[s] = m
                elif m == "pass":
                    moves[s] = Action.pass_()
                elif m == "volunteer":
                    moves[s] = Action.volunteer(best_password(b.state, s))
                else:
                    moves[s] = Action.verify(int(m))
            answers = {s: b.state.puzzles[m.target].answer for s, m in moves.items() if m.kind == "verify"}
            report = resolve_round(b.state, moves, answers, random.Random(0), draw=lambda _k, o, i=pick: o[i])
            reference = reference or report.text()
            if report.text() == reference:
                kept.append(b)
        branches = kept
        history.append(branches[0].state.reports[-1])
        add_report(rnd, history[-1])
        game.rounds.append(rnd)
    now = trace_round(branches[0].state, len(prefix) + 1)
    game.rounds.append(now)
    assert seat in now.alive and not branches[0].state.over
    return branches, history, game, now


def compare(
    views, seat, coins, max_rounds, prefix, observed, variant
) -> tuple[dict[str, float], dict[str, float]]:
    branches, history, game, now = scenario(views, seat, coins, max_rounds, prefix, observed)
    brute = BruteForce(seat, OWNERS, views, variant).action_values(branches, history)
    model = GameTable(OWNERS, views, variant).seat(seat)
    values = model.action_values(round_state(game, now), targets=[1, 2, 3, 4])
    assert set(values) == set(brute)
    for action, v in brute.items():
        assert values[action] == pytest.approx(v, abs=1e-9), (action, values, brute)
    return values, brute


@pytest.mark.parametrize("variant", ["team", "self_reliant"])
@pytest.mark.parametrize("seed", [1, 2])
def test_first_round_of_a_two_round_game(variant: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    views = {s: random_view(rng, k) for k, s in OWNERS.items() if s in TESTED}
    compare(views, "A", coins=2, max_rounds=2, prefix=[], observed=15, variant=variant)


@pytest.mark.parametrize("variant", ["team", "self_reliant"])
def test_after_a_verification_and_a_failed_password(variant: str) -> None:
    """Round 2 of 3: B verified D's puzzle (wrong) while C's password failed (C died)."""
    rng = np.random.default_rng(5)
    views = {s: random_view(rng, k) for k, s in OWNERS.items() if s in TESTED}
    prefix: Prefix = [({"A": "pass", "B": 4, "C": "volunteer", "D": "pass"}, 0)]
    compare(views, "A", coins=3, max_rounds=3, prefix=prefix, observed=0b0111, variant=variant)


def test_first_round_of_a_three_round_game_with_one_coin() -> None:
    rng = np.random.default_rng(11)
    views = {s: random_view(rng, k) for k, s in OWNERS.items() if s in TESTED}
    compare(views, "B", coins=1, max_rounds=3, prefix=[], observed=15, variant="team")


def test_small_sessions_end_to_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Scripted sessions of 2-round games: every scored decision of games 2-3 against the brute force, with
    the views from a brute-force posterior over the session's earlier games."""
    from analysis.yardstick.evidence import heard
    from analysis.yardstick.pipeline import load
    from analysis.yardstick.score import score_run
    from tests.yardstick.test_beliefs import brute_force as posterior_brute_force
    from trustsim import api

    overrides = [
        "agent=random",
        "runs=2",
        "game.games=3",
        "game.max_rounds=2",
        "game.coins=1",
        "progress=false",
    ]
    result = api.run("1strike", overrides, tmp_path / "run")
    assert result.status == "complete", result.failure
    (run,) = load([result.run_dir]).runs
    rows = {(r["session"], r["game"], r["round"], r["seat"]): r for r in score_run(run)}
    checked = 0
    for game in run.games:
        if game.game == 1:
            continue
        earlier = [g for g in run.games if g.session == game.session and g.game < game.game]
        views = {}
        for s in TESTED:
            games = [(g.owners, heard(g, s).facts()) for g in earlier]
            views[s] = tuple(posterior_brute_force(s, games, game.owners, (1.0, 1.0))[0])
        for number, rnd in enumerate(game.rounds, start=1):
            prefix: Prefix = []
            for before, after in zip(game.rounds[: number - 1], game.rounds[1:number], strict=True):
                plan: dict[str, str | int | Action] = {}
                for c in before.choices:
                    if c.action == "verify":
                        plan[c.seat] = int(c.target)  # type: ignore[arg-type]
                    elif c.action == "volunteer":
                        plan[c.seat] = Action.volunteer(c.names or {})
                    else:
                        plan[c.seat] = "pass"
                (dead,) = set(before.alive) - set(after.alive)
                volunteers = [
                    s for s in "ABCD" if isinstance(plan.get(s), Action) and plan[s].kind == "volunteer"
                ]  # type: ignore[union-attr]
                options = volunteers or sorted(before.alive)
                prefix.append((plan, options.index(dead)))
            observed = (
                15 if game.d_correct else 15 & ~bit(next(k for k, s in game.owners.items() if s == "D"))
            )
            for c in rnd.choices:
                if c.seat == "D":
                    continue
                branches, history, _, _ = scenario(views, c.seat, 1, 2, prefix, observed, game.owners)
                brute = BruteForce(c.seat, game.owners, views, "team").action_values(branches, history)
                row = rows[(game.session, game.game, rnd.number, c.seat)]
                assert row["ev_pass"] == pytest.approx(brute["pass"], abs=1e-9)
                assert row["ev_volunteer"] == pytest.approx(brute["volunteer"], abs=1e-9)
                for k in (1, 2, 3, 4):
                    expected = brute.get(f"verify:{k}")  # none without a coin
                    assert row[f"ev_verify_Q{k}"] == (
                        None if expected is None else pytest.approx(expected, abs=1e-9)
                    )
                checked += 1
    assert checked >= 10
