"""Scripted trust-game players: exact behaviour, the human reference distribution, seeded randomness."""

from __future__ import annotations

import numpy as np
import pytest

from agents.trust_game.scripted import (
    BERG_1995_SENT,
    SCRIPTED,
    Fair,
    Human,
    RandomPlayer,
    Reciprocal,
    Selfish,
)
from analysis.trust_game.references import BERG_1995_SENT as ANALYSIS_BERG
from games.trust_game.rules import Stakes
from tests.trust_game.helpers import amounts, session


def test_selfish_sends_and_returns_nothing() -> None:
    for pair in session(Selfish, Fair, pairs=3, rounds=4):
        assert amounts(pair) == [(0, 0)] * 4
        assert all(not x.trustee.asked for x in pair.exchanges)  # nothing received: no decision
    pair = session(Fair, Selfish, rounds=2)[0]
    assert amounts(pair) == [(10, 0), (10, 0)]
    assert [x.trustor_payoff for x in pair.exchanges] == [0, 0]
    assert [x.trustee_payoff for x in pair.exchanges] == [40, 40]


def test_fair_sends_all_and_returns_half() -> None:
    pair = session(Fair, Fair, rounds=3)[0]
    assert amounts(pair) == [(10, 15)] * 3
    assert (pair.exchanges[0].trustor_payoff, pair.exchanges[0].trustee_payoff) == (15, 25)
    odd = session(Fair, Fair, stakes=Stakes(5, 5, 3))[0]
    assert amounts(odd) == [(5, 8)]  # half of 15 rounds up


def test_reciprocal_trustor_follows_the_last_return_ratio() -> None:
    assert amounts(session(Reciprocal, Fair, rounds=3)[0]) == [(5, 8), (10, 15), (10, 15)]
    assert amounts(session(Reciprocal, Selfish, rounds=3)[0]) == [(5, 0), (0, 0), (0, 0)]
    d = session(Reciprocal, Fair, rounds=2)[0].exchanges
    assert d[0].trustor.expected == 7.5 and d[0].trustor.p == 0.5  # opening guess, Laplace 0/0
    assert d[1].trustor.expected == pytest.approx(30 * 8 / 15) and d[1].trustor.p == pytest.approx(2 / 3)


def test_reciprocal_trustee_returns_more_for_more_trust() -> None:
    assert amounts(session(Fair, Reciprocal)[0]) == [(10, 15)]
    returns = {}
    for s in range(11):
        pair = session(_Sends(s), Reciprocal)[0]
        returns[s] = pair.exchanges[0].returned
    assert returns[0] == 0 and returns[10] == 15 and returns[5] == 4
    assert list(returns.values()) == sorted(returns.values())
    assert returns[10] / 30 > returns[5] / 15 > returns[1] / 3  # the share returned grows with trust
    with pytest.raises(ValueError, match="opening"):
        Reciprocal(opening=2)


class _Sends(Selfish):
    def __init__(self, s: int = 0) -> None:
        super().__init__()
        self.s = s

    def send(self, view):  # type: ignore[no-untyped-def]
        from games.trust_game.types import scripted_decision

        return scripted_decision(self.s)


def test_random_player_bounds_and_seeds() -> None:
    pairs = session(RandomPlayer, RandomPlayer, pairs=50, rounds=4, seed=1)
    for p in pairs:
        for x in p.exchanges:
            assert 0 <= x.sent <= 10 and 0 <= x.returned <= 3 * x.sent
    again = session(RandomPlayer, RandomPlayer, pairs=50, rounds=4, seed=1)
    assert [amounts(p) for p in pairs] == [amounts(p) for p in again]
    other = session(RandomPlayer, RandomPlayer, pairs=50, rounds=4, seed=2)
    assert [amounts(p) for p in pairs] != [amounts(p) for p in other]


def test_human_samples_berg_1995_and_returns_the_meta_analytic_share() -> None:
    pairs = session(Human, Human, pairs=4000, seed=3)
    sent = np.array([p.exchanges[0].sent for p in pairs])
    assert set(sent) <= set(BERG_1995_SENT)
    assert abs(sent.mean() - 5.16) < 0.15  # Berg's mean: 165/32
    for s, n in BERG_1995_SENT.items():
        assert abs((sent == s).mean() - n / 32) < 0.03
    given = [p.exchanges[0] for p in pairs if p.exchanges[0].sent > 0]
    shares = np.array([x.returned / x.received for x in given])
    assert all(0 <= x.returned <= x.received for x in given)
    pooled = sum(x.returned for x in given) / sum(x.received for x in given)
    assert abs(pooled - 0.37) < 0.02 and abs(shares.mean() - 0.37) < 0.02  # Johnson & Mislin's mean share
    assert 0.22 < shares.std() < 0.34 and (shares == 0).any() and (shares > 0.8).any()  # returns vary widely
    narrow = session(Fair, Human(return_concentration=200), pairs=2000, seed=4)  # Fair sends all: 30
    narrow_shares = np.array([p.exchanges[0].returned / 30 for p in narrow])
    assert abs(narrow_shares.mean() - 0.37) < 0.01 and narrow_shares.std() < 0.05
    with pytest.raises(ValueError, match="return_concentration"):
        Human(return_concentration=0)
    scaled = session(Human, Selfish, pairs=200, stakes=Stakes(20, 20, 3))
    assert {p.exchanges[0].sent for p in scaled} <= {2 * s for s in BERG_1995_SENT}
    assert BERG_1995_SENT == ANALYSIS_BERG  # the analysis compares against the same data


@pytest.mark.parametrize("cls", SCRIPTED)
def test_every_scripted_player_is_reproducible_and_reusable(cls: type) -> None:
    a = session(cls, cls, pairs=5, rounds=3, seed=9)
    b = session(cls, cls, pairs=5, rounds=3, seed=9)
    assert [amounts(p) for p in a] == [amounts(p) for p in b]
    assert cls.name.startswith("tg_") and not cls.classifier["uses_llm"]
