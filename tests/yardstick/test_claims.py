"""Every optimality claim of docs/yardstick.md ("Claims and their conditions"), checked over a sweep of
``game.max_rounds`` and ``game.coins`` where it is claimed, and shown to fail somewhere outside its
conditions (so each condition is needed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.yardstick.beliefs import Posterior
from analysis.yardstick.evidence import bit
from analysis.yardstick.model import EPS, TESTED, GameTable, RoundState, simplify
from analysis.yardstick.pipeline import analyse_paths
from tests.yardstick.test_beliefs import random_game

MAX_ROUNDS = (1, 2, 3, 4, 5)
COINS = (0, 1, 2, 4, 6)


@dataclass
class Point:
    """One decision: the seat's action values and what the claims' conditions read."""

    variant: str
    rounds_left: int
    values: dict[str, float]
    p_password: float
    p_teammate_volunteers: float

    @property
    def best(self) -> float:
        return max(self.values.values())

    def best_without_verifying(self) -> float:
        return max(v for a, v in self.values.items() if not a.startswith("verify:"))


@dataclass
class Claim:
    name: str
    applies: Callable[[Point], bool]
    holds: Callable[[Point], bool]


CLAIMS = [
    Claim(  # any variant, coins, rounds, failed passwords
        "in the last round volunteering is a best action and no verification is protective",
        lambda p: p.rounds_left == 1,
        lambda p: (
            p.values["volunteer"] >= p.best - EPS
            and all(
                v <= p.best_without_verifying() + EPS for a, v in p.values.items() if a.startswith("verify:")
            )
        ),
    ),
    Claim(
        "with the best password certainly right volunteering is a best action",
        lambda p: p.p_password >= 1 - 1e-12,
        lambda p: p.values["volunteer"] >= p.best - EPS,
    ),
    Claim(
        "self_reliant: a pass is a best action only when every action is worth 0",
        lambda p: p.variant == "self_reliant",
        lambda p: p.values["pass"] < p.best - EPS or p.best <= EPS,
    ),
    Claim(
        "team: when a teammate volunteers, passing is at least as good as volunteering",
        lambda p: p.variant == "team" and p.p_teammate_volunteers >= 1 - 1e-12,
        lambda p: p.values["pass"] >= p.values["volunteer"] - EPS,
    ),
]


def random_point(rng: np.random.Generator, max_rounds: int, coins: int, variant: str) -> Point:
    """A consistent state of a game with these settings (one death per round so far) and random views."""
    seat = str(rng.choice(TESTED))
    owners = random_game(rng, seat)[0]
    views = {}
    for s in TESTED:
        post = Posterior(s)
        for _ in range(int(rng.integers(0, 4))):
            post.add_game(*random_game(rng, s))
        views[s] = post.view(owners)
    number = int(rng.integers(1, min(max_rounds, 4) + 1))
    others = [s for s in "ABCD" if s != seat]
    alive = frozenset([seat, *rng.choice(others, size=4 - number, replace=False)])
    wallet = tuple(int(rng.integers(0, coins + 1)) if s in alive else 0 for s in TESTED)
    verified = int(rng.integers(16)) if rng.random() < 0.5 else 0
    truth = verified & (int(rng.integers(16)) | bit(next(k for k, s in owners.items() if s == seat)))
    failed = [int(rng.integers(1, 16)) & ~verified for _ in range(int(rng.integers(0, number)))]
    state = RoundState(
        max_rounds - number + 1, alive, wallet, verified, truth, simplify(failed, verified, truth)
    )  # type: ignore[arg-type]
    model = GameTable(owners, views, variant).seat(seat)
    return Point(
        variant,
        state.rounds_left,
        model.action_values(state, [1, 2, 3, 4]),
        model.p_password(state),
        model.p_teammate_volunteers(state),
    )


def test_the_model_claims_hold_where_claimed_and_only_there() -> None:
    checked: Counter[str] = Counter()
    outside: Counter[str] = Counter()  # counterexamples outside a claim's conditions
    for max_rounds in MAX_ROUNDS:
        for coins in COINS:
            rng = np.random.default_rng(100 * max_rounds + coins)
            for _ in range(8):
                for variant in ("team", "self_reliant"):
                    point = random_point(rng, max_rounds, coins, variant)
                    for claim in CLAIMS:
                        if claim.applies(point):
                            assert claim.holds(point), (claim.name, max_rounds, coins, point)
                            checked[claim.name] += 1
                        elif not claim.holds(point):
                            outside[claim.name] += 1
    for claim in CLAIMS:
        assert checked[claim.name] >= 10, claim.name
        assert outside[claim.name] >= 1, f"{claim.name}: its condition never mattered in the sweep"


def test_a_pass_is_the_best_action_in_the_documented_state() -> None:
    """docs/yardstick.md: the first round of a memoryless game, Beta(1, 1) prior, every seat alive with 4 coins
    and 4 rounds, teammates playing the reference rule: pass 1.509 > verify another's puzzle 1.440 > ... >
    volunteer 0.500. Passing is a best action with 1 to 4 coins each (tied with volunteering at 1), a
    verification with 5 or more."""
    owners = {1: "A", 2: "B", 3: "C", 4: "D"}
    views = {s: Posterior(s).view(owners) for s in TESTED}
    pass_best = {}
    for coins in range(1, 8):
        model = GameTable(owners, views, "team").seat("A")
        values = model.action_values(RoundState(4, frozenset("ABCD"), (coins,) * 3, 0, 0), [1, 2, 3, 4])  # type: ignore[arg-type]
        pass_best[coins] = values["pass"] >= max(values.values()) - EPS
        if coins == 4:
            assert values["pass"] == pytest.approx(163 / 108)
            assert values["verify:2"] == pytest.approx(311 / 216) and values["verify:4"] < values["verify:2"]
            assert values["volunteer"] == pytest.approx(0.5)
            assert model.p_teammate_volunteers(RoundState(4, frozenset("ABCD"), (4, 4, 4), 0, 0)) == 0.0
            alone = GameTable(owners, views, "self_reliant").seat("A")
            values = alone.action_values(RoundState(4, frozenset("ABCD"), (4, 4, 4), 0, 0), [1, 2, 3, 4])
            assert (values["verify:2"], values["volunteer"], values["pass"]) == pytest.approx(
                (0.5625, 0.5, 0.375)
            )
    assert pass_best == {1: True, 2: True, 3: True, 4: True, 5: False, 6: False, 7: False}


@pytest.fixture(scope="module")
def swept_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Random-agent sessions (passes, verifications, volunteers in every state) over max_rounds x coins."""
    from trustsim import api

    root = tmp_path_factory.mktemp("claims")
    out = []
    for max_rounds in (2, 3):
        for coins in (1, 3):
            overrides = [
                "agent=random",
                "runs=1",
                f"game.max_rounds={max_rounds}",
                f"game.coins={coins}",
                "progress=false",
            ]
            result = api.run("mid2strike", overrides, root / f"r{max_rounds}c{coins}")
            assert result.status == "complete", result.failure
            out.append(result.run_dir)
    return out


@pytest.mark.parametrize("variant", ["team", "self_reliant"])
def test_the_claims_on_scored_runs(swept_runs: list[Path], variant: str) -> None:
    tables, _ = analyse_paths(swept_runs, variant=variant, mc_decisions=0, n_resamples=50)
    d = tables["decisions"]
    assert d["rounds_left"].max() == 3 and d["coins"].max() == 3
    checked: Counter[str] = Counter()
    for r in d.itertuples():
        values = {"pass": r.ev_pass, "volunteer": r.ev_volunteer}
        values |= {
            f"verify:{k}": getattr(r, f"ev_verify_Q{k}")
            for k in (1, 2, 3, 4)
            if not pd.isna(getattr(r, f"ev_verify_Q{k}"))
        }
        certain = all(getattr(r, f"p_Q{k}") >= 1 - 1e-9 for k in (1, 2, 3, 4))
        point = Point(variant, r.rounds_left, values, 1.0 if certain else 0.0, r.p_teammate_volunteers)
        for claim in CLAIMS:
            if claim.applies(point):
                assert claim.holds(point), (claim.name, r)
                checked[claim.name] += 1
    assert checked[CLAIMS[0].name] > 10
    assert checked[CLAIMS[2].name if variant == "self_reliant" else CLAIMS[3].name] > 10


def test_best_responses_do_not_settle_at_the_memoryless_start() -> None:
    """Why the teammates play a stated rule rather than an equilibrium found by iteration (docs/yardstick.md):
    at the memoryless start, teammates of level k playing the best response to level k − 1 (level 0: the
    reference rule), the seat's best move keeps switching between passing and verifying."""
    owners = {1: "A", 2: "B", 3: "C", 4: "D"}
    views = {s: Posterior(s).view(owners) for s in TESTED}

    class Level(GameTable):
        def __init__(self, below: GameTable | None) -> None:
            super().__init__(owners, views, "team")
            self.below = below

        def teammate_moves(self, state: RoundState, seat: str):  # type: ignore[no-untyped-def]
            if self.below is None:
                return super().teammate_moves(state, seat)
            return [(self.below.seat(seat).best_move(state), 1.0)]

    start = RoundState(4, frozenset("ABCD"), (4, 4, 4), 0, 0)
    table: GameTable = Level(None)
    moves = []
    for _ in range(9):
        moves.append("pass" if table.seat("A").best_move(start) == "pass" else "verify")
        table = Level(table)
    assert moves == ["pass", "verify", "verify", "verify", "pass", "verify", "verify", "pass", "verify"]
