"""Generous tit-for-tat against Axelrod's GTFT at T = 5, 7 and 12.

Axelrod (4.14) is not a dependency (it requires torch), so the reference here is an independent
implementation of its published rule: ``axelrod.strategies.memoryone.GTFT`` is the memory-one player with
four-vector (1, p, 1, p) over (own last, opponent's last) in the order CC, CD, DC, DD, first move C, and a
default p computed once from the library's default game (R, P, S, T) = (3, 1, 0, 5), i.e. 1/3 in every match.
The exact distribution of play against memory-one opponents is a Markov chain; the arena's GTFT, played
over many seeded matches, must match its expectations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.arena import scripted as s
from agents.arena.base import ArenaPlayer
from games.arena.model import ArenaModel
from games.arena.rules import Payoffs
from trustsim.horizon import Horizon

STATES = (("C", "C"), ("C", "D"), ("D", "C"), ("D", "D"))
AXELROD_DEFAULT_GAME = {"R": 3.0, "P": 1.0, "S": 0.0, "T": 5.0}


def axelrod_gtft_p() -> float:
    """Axelrod's default p: min(1 - (T-R)/(R-S), (R-P)/(T-P)) of its default game, fixed at construction."""
    g = AXELROD_DEFAULT_GAME
    return min(1 - (g["T"] - g["R"]) / (g["R"] - g["S"]), (g["R"] - g["P"]) / (g["T"] - g["P"]))


# memory-one players as (P(first move is C), P(C | own last, opponent's last) in STATES order)
def axelrod_gtft() -> tuple[float, tuple[float, ...]]:
    p = axelrod_gtft_p()
    return 1.0, (1.0, p, 1.0, p)


OPPONENTS: dict[str, tuple[ArenaPlayer, tuple[float, tuple[float, ...]]]] = {
    "defector": (s.Defector(), (0.0, (0.0, 0.0, 0.0, 0.0))),
    "suspicious_tft": (s.SuspiciousTitForTat(), (0.0, (1.0, 0.0, 1.0, 0.0))),
    "pavlov": (s.Pavlov(), (1.0, (1.0, 0.0, 0.0, 1.0))),
    "random": (s.RandomPlayer(0.5), (0.5, (0.5, 0.5, 0.5, 0.5))),
}


def exact_expectations(
    a: tuple[float, tuple[float, ...]], b: tuple[float, tuple[float, ...]], rounds: int, pay: Payoffs
) -> tuple[float, float]:
    """Expected (cooperations, payoff) of memory-one player ``a`` against ``b`` over ``rounds`` rounds."""
    (a0, va), (b0, vb) = a, b
    dist = np.array([a0 * b0, a0 * (1 - b0), (1 - a0) * b0, (1 - a0) * (1 - b0)])
    payoff_a = np.array([pay.R, pay.S, pay.T, pay.P])
    coop_a = np.array([1.0, 1.0, 0.0, 0.0])
    step = np.zeros((4, 4))
    for i, (x, y) in enumerate(STATES):
        pa, pb = va[i], vb[STATES.index((y, x))]  # b sees the state from its own side
        step[i] = [pa * pb, pa * (1 - pb), (1 - pa) * pb, (1 - pa) * (1 - pb)]
    coop = pays = 0.0
    for _ in range(rounds):
        coop += float(dist @ coop_a)
        pays += float(dist @ payoff_a)
        dist = dist @ step
    return coop, pays


def arena_totals(opponent: ArenaPlayer, pay: Payoffs, rounds: int, matches: int) -> np.ndarray:
    """Per-match (cooperations, payoff) of the arena's default GTFT in seat A over seeded matches."""
    out = np.zeros((matches, 2))
    for seed in range(matches):
        m = ArenaModel(
            seed=seed, players=(s.GenerousTitForTat(), opponent), payoffs=pay, horizon=Horizon(rounds)
        )
        rec = m.play()
        out[seed] = rec.moves("A").count("C"), rec.total("A")
    return out


@pytest.mark.parametrize("temptation", [5.0, 7.0, 12.0])
def test_default_generosity_is_axelrods(temptation: float) -> None:
    pay = Payoffs(T=temptation)
    assert s.default_generosity(pay) == pytest.approx(axelrod_gtft_p()) == pytest.approx(1 / 3)
    assert s.formula_generosity(pay) == pytest.approx(
        1 / 3 if temptation == 5.0 else 1 - (temptation - 3) / 3
    )


def test_formula_is_kept_where_positive() -> None:
    assert s.default_generosity(Payoffs(T=4.0)) == pytest.approx(2 / 3)
    assert s.default_generosity(Payoffs(T=6.0)) == pytest.approx(1 / 3)  # formula 0: Axelrod's 1/3
    assert s.default_generosity(None) == pytest.approx(1 / 3)


@pytest.mark.parametrize("temptation", [5.0, 7.0, 12.0])
@pytest.mark.parametrize("opponent", sorted(OPPONENTS))
def test_play_matches_axelrods_gtft(temptation: float, opponent: str) -> None:
    pay, rounds, matches = Payoffs(T=temptation), 12, 300
    player, reference = OPPONENTS[opponent]
    coop, payoff = exact_expectations(axelrod_gtft(), reference, rounds, pay)
    got = arena_totals(player, pay, rounds, matches)
    for col, expected in ((0, coop), (1, payoff)):
        mean, sd = got[:, col].mean(), got[:, col].std(ddof=1)
        if sd == 0:  # deterministic play (e.g. against Pavlov: mutual cooperation throughout)
            assert mean == pytest.approx(expected), (opponent, temptation, col)
        else:
            z = (mean - expected) / (sd / math.sqrt(matches))
            assert abs(z) < 4.5, (opponent, temptation, col, mean, expected)


def test_comparison_separates_gtft_from_tft() -> None:
    """At T = 12 the arena's GTFT is near Axelrod's expectation and far from tit-for-tat's (its old play)."""
    pay, rounds, matches = Payoffs(T=12.0), 12, 300
    coop, _ = exact_expectations(axelrod_gtft(), OPPONENTS["defector"][1], rounds, pay)
    tft = exact_expectations((1.0, (1.0, 0.0, 1.0, 0.0)), OPPONENTS["defector"][1], rounds, pay)[0]
    got = arena_totals(s.Defector(), pay, rounds, matches)[:, 0].mean()
    assert tft == 1.0 and abs(got - coop) < 0.2 * abs(coop - tft)
