"""Scripted arena players: generic checks plus one-line behaviour tests (versus_test)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from agents.arena import scripted as s
from tests.arena.player_base import PlayerTest, play, versus_test


class TestCooperator(PlayerTest):
    player = s.Cooperator
    expected_name = "always_cooperate"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "memory_depth": 0}

    def test_behaviour(self) -> None:
        versus_test(s.Cooperator(), s.Defector(), "CCCCC")


class TestDefector(PlayerTest):
    player = s.Defector
    expected_name = "always_defect"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "memory_depth": 0}

    def test_behaviour(self) -> None:
        versus_test(s.Defector(), s.Cooperator(), "DDDDD")


class TestTitForTat(PlayerTest):
    player = s.TitForTat
    expected_name = "tit_for_tat"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "memory_depth": 1}

    def test_behaviour(self) -> None:
        versus_test(s.TitForTat(), s.Defector(), "CDDDD")
        versus_test(s.TitForTat(), s.Cooperator(), "CCCCC")
        versus_test(s.TitForTat(), s.SuspiciousTitForTat(), "CDCDCD")


class TestSuspiciousTitForTat(PlayerTest):
    player = s.SuspiciousTitForTat
    expected_name = "suspicious_tit_for_tat"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False}

    def test_behaviour(self) -> None:
        versus_test(s.SuspiciousTitForTat(), s.Cooperator(), "DCCCC")


class TestGrimTrigger(PlayerTest):
    player = s.GrimTrigger
    expected_name = "grim_trigger"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "memory_depth": float("inf")}

    def test_behaviour(self) -> None:
        versus_test(s.GrimTrigger(), s.SuspiciousTitForTat(), "CDDDDD")
        # a nice opponent that never defects first keeps grim trigger cooperating
        versus_test(s.GrimTrigger(), s.Pavlov(), "CCCCC")


class TestPavlov(PlayerTest):
    player = s.Pavlov
    expected_name = "pavlov"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": False}

    def test_behaviour(self) -> None:
        versus_test(s.Pavlov(), s.Defector(), "CDCDCD")
        versus_test(s.Pavlov(), s.Cooperator(), "CCCC")


class TestRandomPlayer(PlayerTest):
    player = s.RandomPlayer
    params: ClassVar[dict[str, Any]] = {"p": 0.5}
    expected_name = "random"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": True, "memory_depth": 0}

    def test_behaviour(self) -> None:
        versus_test(s.RandomPlayer(1.0), s.Defector(), "CCCC")
        versus_test(s.RandomPlayer(0.0), s.Cooperator(), "DDDD")
        moves, _ = play(s.RandomPlayer(0.3), s.Cooperator(), 4000, seed=2)
        assert moves.count("C") / 4000 == pytest.approx(0.3, abs=0.03)

    def test_bad_p(self) -> None:
        with pytest.raises(ValueError, match="p must be in"):
            s.RandomPlayer(1.5)


class TestGenerousTitForTat(PlayerTest):
    player = s.GenerousTitForTat
    expected_name = "generous_tit_for_tat"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": True}

    def test_behaviour(self) -> None:
        versus_test(s.GenerousTitForTat(generosity=0.0), s.Defector(), "CDDD")
        versus_test(s.GenerousTitForTat(generosity=1.0), s.Defector(), "CCCC")
        moves, _ = play(s.GenerousTitForTat(), s.Defector(), 3001, seed=1)
        assert moves[1:].count("C") / 3000 == pytest.approx(1 / 3, abs=0.03)


class TestNoisyTitForTat(PlayerTest):
    player = s.NoisyTitForTat
    expected_name = "noisy_tit_for_tat"
    expected_classifier: ClassVar[dict[str, Any]] = {"stochastic": True}

    def test_behaviour(self) -> None:
        versus_test(s.NoisyTitForTat(noise=0.0), s.Defector(), "CDDD")
        versus_test(s.NoisyTitForTat(noise=1.0), s.Defector(), "DCCC")


class TestForecastingTitForTat(PlayerTest):
    player = s.ForecastingTitForTat
    expected_name = "forecasting_tit_for_tat"
    expected_classifier: ClassVar[dict[str, Any]] = {"states_confidence": True}

    def test_behaviour(self) -> None:
        versus_test(s.ForecastingTitForTat(), s.Defector(), "CDDD")

    def test_states_laplace_probability(self) -> None:
        from games.arena.model import ArenaModel
        from games.arena.rules import Payoffs
        from trustsim.horizon import Horizon

        m = ArenaModel(
            seed=0,
            players=(s.ForecastingTitForTat(), s.Defector()),
            payoffs=Payoffs(),
            horizon=Horizon(4),
        )
        rec = m.play()
        assert [r.decisions["A"].p_cooperate for r in rec.rounds] == pytest.approx(
            [1 / 2, 1 / 3, 1 / 4, 1 / 5]
        )


def test_every_scripted_player_is_tested() -> None:
    tested = {c.player for c in PlayerTest.__subclasses__()}
    assert set(s.SCRIPTED) <= tested
