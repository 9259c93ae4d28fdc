"""Trust-game rules: amounts, bounds, payoffs, horizon (plain code, no model, no Mesa)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.trust_game.rules import Stakes, parse_amount, return_ratio, round_half_up
from trustsim.horizon import Horizon


@pytest.mark.parametrize(
    ("raw", "value", "valid", "reason"),
    [
        (7, 7, True, None),
        (0, 0, True, None),
        (10, 10, True, None),
        (5.0, 5, True, None),
        (" 4 ", 4, True, None),
        ("6.0", 6, True, None),
        (11, 0, False, "out_of_range"),
        (-1, 0, False, "out_of_range"),
        ("-2", 0, False, "out_of_range"),
        (2.5, 0, False, "not_an_integer"),
        ("2.5", 0, False, "not_an_integer"),
        ("seven", 0, False, "not_an_integer"),
        ("all of it", 0, False, "not_an_integer"),
        (True, 0, False, "not_an_integer"),
        (float("nan"), 0, False, "not_an_integer"),
        ([3], 0, False, "not_an_integer"),
        (None, 0, False, "missing"),
    ],
)
def test_parse_amount(raw: object, value: int, valid: bool, reason: str | None) -> None:
    a = parse_amount(raw, 10)
    assert (a.value, a.valid, a.reason) == (value, valid, reason)


def test_invalid_amount_keeps_raw_text() -> None:
    assert parse_amount("about 2.5 points", 10).raw == "about 2.5 points"
    assert parse_amount(12, 10).raw == "12"
    assert parse_amount(True, 10).raw == "true"


def test_payoffs_and_bounds() -> None:
    st_ = Stakes(10, 10, 3)
    assert st_.payoffs(10, 15) == (15, 25)
    assert st_.payoffs(5, 5) == (10, 20)
    assert st_.payoffs(0, 0) == (10, 10)
    assert st_.payoffs(4, 0) == (6, 22)
    assert Stakes(10, 0, 2).payoffs(10, 0) == (0, 20)
    for s, r in ((11, 0), (-1, 0), (4, 13), (4, -1), (0, 1)):
        with pytest.raises(ValueError):
            st_.payoffs(s, r)
    assert st_.received(7) == 21 and st_.max_surplus() == 20 and st_.surplus(4) == 8
    for bad in ({"endowment": 0}, {"multiplier": 0}, {"trustee_endowment": -1}):
        with pytest.raises(ValueError):
            Stakes(**bad)  # type: ignore[arg-type]


def test_return_ratio_and_rounding() -> None:
    assert return_ratio(10, 15, 3) == 0.5 and return_ratio(0, 0, 3) is None
    assert [round_half_up(x) for x in (7.5, 2.5, 2.4999, 0.0, 14.5)] == [8, 3, 2, 0, 15]


@given(e=st.integers(1, 50), e_t=st.integers(0, 50), k=st.integers(1, 5), data=st.data())
def test_payoffs_conserve_surplus(e: int, e_t: int, k: int, data: st.DataObject) -> None:
    stakes = Stakes(e, e_t, k)
    s = data.draw(st.integers(0, e))
    r = data.draw(st.integers(0, k * s))
    a, b = stakes.payoffs(s, r)
    assert a + b == e + e_t + stakes.surplus(s)
    assert a >= 0 and b >= e_t and a <= e + k * s


def test_horizon() -> None:
    rng = np.random.default_rng(0)
    assert Horizon(10).draw_length(rng) == 10
    lengths = [
        Horizon(1, 0.8, known=False, max_rounds=12).draw_length(np.random.default_rng(i)) for i in range(300)
    ]
    assert min(lengths) >= 1 and max(lengths) == 12 and 4 < np.mean(lengths) < 5.5  # mean 1/(1-0.8)=5, capped
    assert Horizon(1).repeated is False and Horizon(2).repeated and Horizon(known=False).repeated
    assert Horizon(3).has_next(2) is True and Horizon(3).has_next(3) is False
    assert Horizon(known=False).has_next(7) is None
    for bad in ({"rounds": 0}, {"continue_p": 1.0}, {"max_rounds": 0}):
        with pytest.raises(ValueError):
            Horizon(**bad)  # type: ignore[arg-type]
