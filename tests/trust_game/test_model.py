"""The trust-game Mesa model: phases, invalid amounts, history modes, unknown horizons."""

from __future__ import annotations

import asyncio

import mesa
import pytest

from agents.trust_game.base import TrustPlayer
from agents.trust_game.scripted import Fair, Reciprocal, Selfish
from games.trust_game.model import RoleAgent, TrustGameModel
from games.trust_game.rules import Amount, Stakes, parse_amount
from games.trust_game.types import Decision, TrusteeView, TrustorView
from tests.trust_game.helpers import amounts, session
from trustsim.horizon import Horizon


class Scripted(TrustPlayer):
    """Answers from fixed raw values (parsed like a model's), remembering what it saw."""

    def __init__(self, sends: list[object] | None = None, returns: list[object] | None = None) -> None:
        super().__init__()
        self.sends, self.returns = list(sends or []), list(returns or [])
        self.seen: list[TrustorView | TrusteeView] = []

    def send(self, view: TrustorView) -> Decision:
        self.seen.append(view)
        return Decision(parse_amount(self.sends.pop(0), view.info.stakes.endowment))

    def give_back(self, view: TrusteeView) -> Decision:
        self.seen.append(view)
        return Decision(parse_amount(self.returns.pop(0), view.received))


def test_invalid_amounts_are_recorded_and_resolved_as_zero() -> None:
    trustor = Scripted(sends=["lots", 4, 12, 6])
    trustee = Scripted(returns=[13, "2.5", 3])
    pair = session(trustor, trustee, rounds=4)[0]
    assert amounts(pair) == [(0, 0), (4, 0), (0, 0), (6, 0)]
    xs = pair.exchanges
    assert (xs[0].trustor.amount.valid, xs[0].trustor.amount.raw, xs[0].trustor.amount.reason) == (
        False,
        "lots",
        "not_an_integer",
    )
    assert not xs[0].trustee.asked  # s resolved as 0: the trustee is not asked
    assert (xs[1].trustee.amount.valid, xs[1].trustee.amount.reason, xs[1].trustee.amount.raw) == (
        False,
        "out_of_range",
        "13",
    )
    assert xs[2].trustor.amount.reason == "out_of_range" and xs[3].trustee.amount.reason == "not_an_integer"
    assert (xs[3].trustor_payoff, xs[3].trustee_payoff) == (4, 28)
    assert trustee.returns == [3] and len(trustee.seen) == 2  # asked only when something was sent


def test_history_modes() -> None:
    own = Scripted(sends=[5, 5, 5])
    session(own, Fair, rounds=3)
    assert [len(v.past) for v in own.seen] == [0, 1, 2] and own.seen[2].past[1].returned == 8
    hidden = Scripted(sends=[5, 5, 5])
    session(hidden, Fair, rounds=3, history="none")
    assert [len(v.past) for v in hidden.seen] == [0, 0, 0]
    trustee = Scripted(returns=[1, 1, 1])
    session(Fair, trustee, rounds=3, history="none")  # the trustee always sees its own past rounds
    assert [len(v.past) for v in trustee.seen] == [0, 1, 2]
    assert [v.asks_next for v in trustee.seen] == [True, True, False]
    pop = Scripted(sends=[5])
    rows = ((0, 2, 0.0), (10, 1, 15.0))
    session(pop, Fair, history="population", population=rows)
    assert pop.seen[0].info.population == rows
    with pytest.raises(ValueError, match="history"):
        session(Fair, Fair, history="everything")


def test_unknown_horizon_lengths_per_pair() -> None:
    pairs = session(Fair, Fair, pairs=30, horizon=Horizon(1, 0.7, known=False, max_rounds=6), seed=4)
    lengths = [len(p.exchanges) for p in pairs]
    assert (
        len(set(lengths)) > 2
        and max(lengths) <= 6
        and all(n == p.length for n, p in zip(lengths, pairs, strict=True))
    )
    again = session(Selfish, Reciprocal, pairs=30, horizon=Horizon(1, 0.7, known=False, max_rounds=6), seed=4)
    assert [len(p.exchanges) for p in again] == lengths  # lengths come from the world, not the agents


def test_mesa_agents_and_async_play() -> None:
    model = TrustGameModel(
        seed=0, players=[(Fair(), Fair()), (Selfish(), Fair())], stakes=Stakes(), horizon=Horizon(2)
    )
    assert isinstance(model, mesa.Model) and len(model.agents) == 4
    assert {a.role for a in model.agents_by_type[RoleAgent]} == {"trustor", "trustee"}
    pairs = asyncio.run(model.aplay())
    assert [amounts(p) for p in pairs] == [[(10, 15)] * 2, [(0, 0)] * 2] and model.steps == 2
    with pytest.raises(RuntimeError, match="over"):
        model.resolve({})


def test_decisions_stay_exact_types() -> None:
    d = Decision(Amount(3, True, "3"))
    assert d.asked and d.p is None and d.expected is None
