"""Property tests of the arena model over random pairings, seeds, noise and payoffs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agents.arena.scripted import SCRIPTED
from games.arena.model import ArenaModel
from games.arena.rules import Payoffs
from trustsim.horizon import Horizon


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(SCRIPTED),
    st.sampled_from(SCRIPTED),
    st.integers(0, 2**31),
    st.sampled_from([0.0, 0.05, 0.5]),
    st.sampled_from([5.0, 7.0, 12.0]),
    st.sampled_from(["announced", "unknown"]),
)
def test_match_invariants(a, b, seed: int, noise: float, t: float, horizon: str) -> None:
    pay = Payoffs(T=t)
    m = ArenaModel(
        seed=seed,
        players=(a(), b()),
        payoffs=pay,
        horizon=Horizon(30, 0.8, known=horizon == "announced", max_rounds=30),
        noise=noise,
    )
    rec = m.play()
    assert 1 <= len(rec.rounds) == rec.length <= 30
    if horizon == "announced":
        assert rec.length == 30
    for r in rec.rounds:
        assert (r.payoffs["A"], r.payoffs["B"]) == pay.pair(r.executed["A"], r.executed["B"])
        for seat in "AB":
            assert r.flipped[seat] == (r.executed[seat] != r.intended[seat])
            if noise == 0.0:
                assert not r.flipped[seat]
    assert rec.total("A") == sum(r.payoffs["A"] for r in rec.rounds)
    # what each player saw is the executed history
    assert m.history["A"] == rec.moves("A") and m.history["B"] == rec.moves("B")
    # the same seed replays the same match
    again = ArenaModel(
        seed=seed,
        players=(a(), b()),
        payoffs=pay,
        horizon=Horizon(30, 0.8, known=horizon == "announced", max_rounds=30),
        noise=noise,
    ).play()
    assert again.moves("A") == rec.moves("A") and again.moves("B") == rec.moves("B")
