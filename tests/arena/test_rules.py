"""Arena rules: payoffs, noise, horizon, invalid-move rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.arena.rules import Payoffs, apply_noise, flip, resolve_invalid
from trustsim.horizon import Horizon


def test_payoff_table_default() -> None:
    p = Payoffs()
    assert p.pair("C", "C") == (3, 3)
    assert p.pair("D", "D") == (1, 1)
    assert p.pair("D", "C") == (5, 0)
    assert p.pair("C", "D") == (0, 5)


@pytest.mark.parametrize("t", [5, 7, 12])
def test_temptation_configurable(t: float) -> None:
    assert Payoffs(T=t).pair("D", "C") == (t, 0)


def test_not_a_dilemma_is_rejected() -> None:
    with pytest.raises(ValueError, match="T > R > P > S"):
        Payoffs(T=2)


@given(st.sampled_from("CD"), st.sampled_from("CD"))
def test_payoffs_symmetric(a: str, b: str) -> None:
    p = Payoffs(T=7)
    assert p.pair(a, b) == p.pair(b, a)[::-1]  # type: ignore[arg-type]


def test_noise_rate_and_alignment() -> None:
    rng = np.random.default_rng(0)
    flips = [apply_noise("C", 0.2, rng)[1] for _ in range(5000)]
    assert np.mean(flips) == pytest.approx(0.2, abs=0.02)
    # one draw per call whatever the noise: streams stay aligned across settings
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    apply_noise("C", 0.0, a)
    apply_noise("C", 0.9, b)
    assert a.random() == b.random()
    assert apply_noise("D", 1.0, a) == ("C", True) and flip("C") == "D"


def test_horizon_announced_and_unknown() -> None:
    rng = np.random.default_rng(0)
    assert Horizon(17).draw_length(rng) == 17
    h = Horizon(10_000, 0.9, known=False, max_rounds=10_000)
    lengths = [h.draw_length(rng) for _ in range(4000)]
    assert min(lengths) >= 1 and np.mean(lengths) == pytest.approx(10, rel=0.06)
    capped = Horizon(5, 0.99, known=False, max_rounds=5)
    assert max(capped.draw_length(rng) for _ in range(200)) == 5


@pytest.mark.parametrize(
    ("kw", "msg"),
    [({"rounds": 0}, "rounds"), ({"continue_p": 1.0}, "continue_p"), ({"max_rounds": 0}, "max_rounds")],
)
def test_bad_horizon(kw: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        Horizon(**kw)


def test_invalid_move_rules() -> None:
    assert resolve_invalid("repeat", []) == "C"
    assert resolve_invalid("repeat", ["C", "D"]) == "D"
    assert resolve_invalid("cooperate", ["D"]) == "C"
    assert resolve_invalid("defect", []) == "D"
    with pytest.raises(ValueError, match="invalid-move rule"):
        resolve_invalid("random", [])  # type: ignore[arg-type]
