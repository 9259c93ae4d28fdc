"""The Mesa arena model: one step is one round, seeded streams, noise, unknown horizon."""

from __future__ import annotations

import mesa
import pytest

from agents.arena.scripted import Cooperator, Defector, GrimTrigger, RandomPlayer, TitForTat
from games.arena.model import ArenaModel
from games.arena.rules import Payoffs
from tests.arena.player_base import play
from trustsim.horizon import Horizon


def make(a, b, rounds: int = 10, **kw) -> ArenaModel:
    return ArenaModel(
        seed=kw.pop("seed", 0), players=(a, b), payoffs=Payoffs(), horizon=Horizon(rounds), **kw
    )


def test_players_are_mesa_agents_and_step_is_a_round() -> None:
    m = make(TitForTat(), Defector(), 3)
    assert isinstance(m, mesa.Model) and len(m.agents) == 2
    assert all(isinstance(a, mesa.Agent) for a in m.agents)
    m.step()
    assert m.round == 2 and m.running
    m.step()
    m.step()
    assert not m.running
    with pytest.raises(RuntimeError, match="over"):
        m.step()


def test_payoff_totals() -> None:
    rec = make(TitForTat(), Defector(), 5).play()
    assert rec.total("A") == 0 + 1 * 4 and rec.total("B") == 5 + 1 * 4


def test_noise_flips_executed_moves_and_players_see_them() -> None:
    rec = make(Cooperator(), GrimTrigger(), 200, noise=0.1, seed=4).play()
    flips = [r.flipped["A"] for r in rec.rounds]
    assert 5 < sum(flips) < 40
    first_flip = flips.index(True)
    assert rec.rounds[first_flip].intended["A"] == "C" and rec.rounds[first_flip].executed["A"] == "D"
    # grim trigger reacts to the executed (flipped) move
    assert all(r.intended["B"] == "D" for r in rec.rounds[first_flip + 1 :])


def test_common_random_numbers_across_opponents() -> None:
    """The noise and length streams do not depend on who plays."""
    a = make(Cooperator(), Cooperator(), 100, noise=0.2, seed=9).play()
    b = make(Cooperator(), RandomPlayer(0.5), 100, noise=0.2, seed=9).play()
    assert [r.flipped["A"] for r in a.rounds] == [r.flipped["A"] for r in b.rounds]


def test_unknown_horizon_is_seeded() -> None:
    h = Horizon(500, 0.9, known=False, max_rounds=500)
    lengths = {
        ArenaModel(seed=s, players=(TitForTat(), TitForTat()), payoffs=Payoffs(), horizon=h).record.length
        for s in range(20)
    }
    assert len(lengths) > 3
    again = ArenaModel(seed=3, players=(Defector(), Cooperator()), payoffs=Payoffs(), horizon=h).play()
    assert (
        len(again.rounds)
        == ArenaModel(seed=3, players=(TitForTat(), TitForTat()), payoffs=Payoffs(), horizon=h).record.length
    )


def test_named_and_anonymous_opponent() -> None:
    named = make(TitForTat(), RandomPlayer(0.3))
    assert named.seats["A"].player.info.opponent == "random(0.3)"
    anon = make(TitForTat(), RandomPlayer(0.3), named=False)
    assert anon.seats["A"].player.info.opponent is None and anon.seats["B"].player.info.seat == "B"


def test_same_seed_same_match() -> None:
    assert play(RandomPlayer(0.5), RandomPlayer(0.5), 50, seed=2) == play(
        RandomPlayer(0.5), RandomPlayer(0.5), 50, seed=2
    )
    assert play(RandomPlayer(0.5), RandomPlayer(0.5), 50, seed=2) != play(
        RandomPlayer(0.5), RandomPlayer(0.5), 50, seed=3
    )


def test_bad_noise() -> None:
    with pytest.raises(ValueError, match="noise"):
        make(TitForTat(), TitForTat(), noise=1.5)
