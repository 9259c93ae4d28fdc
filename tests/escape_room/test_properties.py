"""Hypothesis properties of whole games: coins never negative, games end, deaths ≤ seats, one outcome."""

from __future__ import annotations

import asyncio
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agents.escape_room.base import Services
from agents.escape_room.partner import ScriptedPartner
from agents.escape_room.scripted import RandomPolicy
from games.escape_room.model import EscapeRoomModel
from games.escape_room.options import EscapeRoomOptions
from games.escape_room.puzzles import generate_puzzles, plausible_wrong_answer
from tests.escape_room.helpers import make_options


def _options(coins: int, max_rounds: int, d_correct: bool) -> EscapeRoomOptions:
    return make_options("T" if d_correct else "F", coins=coins, max_rounds=max_rounds)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    coins=st.integers(0, 5),
    max_rounds=st.integers(1, 8),
    d_correct=st.booleans(),
    weights=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0.01, 1)),
    partner_puzzle=st.integers(1, 4),
)
def test_random_games_respect_invariants(seed, coins, max_rounds, d_correct, weights, partner_puzzle):
    policies = {
        s: RandomPolicy(p_pass=weights[0], p_verify=weights[1], p_volunteer=weights[2]) for s in "ABC"
    }
    policies["D"] = ScriptedPartner()
    for i, (seat, policy) in enumerate(policies.items()):
        import numpy as np

        policy.start_session(seat, np.random.default_rng(seed + i), Services())
    model = EscapeRoomModel(
        seed=seed,
        game=1,
        options=_options(coins, max_rounds, d_correct),
        policies=policies,
        partner_puzzle=partner_puzzle,
    )
    rec = asyncio.run(model.play())
    state = rec.state
    assert state.over  # a game always ends
    assert state.round <= max_rounds
    assert all(c >= 0 for c in state.coins.values())  # coins never negative
    assert len(state.deaths) <= len(state.seats)
    assert len(set(s for s, _, _ in state.deaths)) == len(state.deaths)  # nobody dies twice
    assert all(state.score(s) <= state.coins[s] <= coins for s in state.seats)
    outcomes = [
        state.escaped,
        not state.alive and not state.escaped,
        bool(state.alive) and not state.escaped and state.round >= max_rounds,
    ]
    assert sum(outcomes) == 1  # exactly one outcome
    assert state.outcome in ("escaped", "all_dead", "max_rounds")
    if not d_correct and state.escaped:  # an escape with D wrong needs a verified replacement capsule
        assert any(c.label != f"Q{partner_puzzle}-D" for c in state.capsules[partner_puzzle])


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_puzzles_are_distinct_integers_in_range(seed):
    puzzles = generate_puzzles(random.Random(seed), 4)
    assert len({p.text for p in puzzles}) == 4
    assert all(4 <= p.answer <= 90 for p in puzzles)
    for p in puzzles:
        expr = p.text.removeprefix("What is ").removesuffix("?").replace("×", "*").replace("÷", "/")
        assert eval(expr) == p.answer


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), answer=st.integers(4, 90))
def test_wrong_answers_are_never_right(seed, answer):
    wrong = plausible_wrong_answer(random.Random(seed), answer)
    assert wrong != answer and wrong >= 1
