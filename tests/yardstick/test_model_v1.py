"""The superseded v1 model (kept for the comparison in docs/yardstick.md): hand-computed values, the bayes rule,
exact in-game inference, and the agreement of every analytic expected value with a Monte Carlo simulation of the same model."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.yardstick.v1.model import (
    EPS,
    State,
    action_values,
    best_action,
    death_risk_pass,
    death_risk_volunteer,
    ev_volunteer,
    value,
)
from analysis.yardstick.v1.montecarlo import simulate

ALL = (1, 2, 3, 4)


def test_memoryless_first_round_by_hand() -> None:
    # seat A: own Q1, three partners at the Beta(1, 1) prior mean; 4 coins, 4 alive, 4 rounds
    s = State.of(4, {1: 1.0, 2: 0.5, 3: 0.5, 4: 0.5}, alive=4, rounds_left=4)
    team = action_values(s, ALL, "team")
    assert team["volunteer"] == pytest.approx(4 * 0.125)
    # verify one, then (optimally) verify the next two and volunteer with 1 coin; or verify two and
    # volunteer with 2 coins at P=0.5: both 1.0
    assert team["verify:2"] == pytest.approx(1.0)
    assert team["verify:1"] == pytest.approx(0.5)  # own puzzle: a wasted coin and round (ritual)
    # pass: survive the elimination (3/4), then the same problem with 3 alive and 3 rounds: value 1.0
    assert team["pass"] == pytest.approx(0.75)
    self_reliant = action_values(s, ALL, "self_reliant")
    # 3/4 * max(3 * 0.25, 2/3 * max(2 * 0.5, 1/2 * 1 * 1)) = 3/4 * 3/4
    assert self_reliant["verify:2"] == pytest.approx(0.5625)
    assert death_risk_pass(s) == pytest.approx(0.25)
    assert death_risk_volunteer(s) == pytest.approx(0.875)


def test_last_round_only_volunteering_counts() -> None:
    s = State.of(3, {1: 1.0, 2: 0.9, 3: 1.0, 4: 0.2}, alive=2, rounds_left=1)
    values = action_values(s, ALL)
    assert values["pass"] == 0.0 and all(values[f"verify:{k}"] == 0.0 for k in ALL)
    assert values["volunteer"] == pytest.approx(3 * 0.9 * 0.2)


def test_no_coins_no_verification_and_nothing_to_win() -> None:
    s = State.of(0, {1: 1.0, 2: 0.5, 3: 1.0, 4: 1.0}, alive=4, rounds_left=4)
    values = action_values(s, ALL)
    assert set(values) == {"pass", "volunteer"}
    assert values == {"pass": 0.0, "volunteer": 0.0}


def test_failed_password_conditions_the_capsules_exactly() -> None:
    # Q2 and Q4 unverified (p = 0.5 each) and a password naming both failed: not both right
    s = State.of(3, {1: 1.0, 2: 0.5, 3: 1.0, 4: 0.5}, alive=3, rounds_left=3, failed=[[2, 4]])
    assert s.prob(2) == pytest.approx(1 / 3) and s.prob(4) == pytest.approx(1 / 3)
    assert ev_volunteer(s) == 0.0  # the same password again is certainly wrong
    assert death_risk_volunteer(s) == pytest.approx(1.0)
    values = action_values(s, ALL)
    # verify Q2: right (1/3) -> Q4 is certainly wrong, verify it too, volunteer with 1 coin;
    # wrong (2/3) -> Q4 right with 1/2: volunteer with 2 coins (1.0) or verify it (1 coin, certain): 1.0
    assert values["verify:2"] == pytest.approx(1 / 3 * 1 + 2 / 3 * 1.0)
    assert best_action(values) == "verify:2"
    # a single uncertain capsule in a failed password is certainly wrong
    one = State.of(4, {1: 1.0, 2: 1.0, 3: 1.0, 4: 0.8}, alive=4, rounds_left=4, failed=[[4]])
    assert one.prob(4) == 0.0


def _bayes(s: State, coins: int) -> str:
    """The bayes agent's rule: verify the least reliable unverified puzzle if (1 - p) * coins > 1."""
    if not s.uncertain:
        return "volunteer"
    k = min(s.uncertain, key=lambda q: (s.prob(q), q))
    return f"verify:{k}" if coins > 0 and (1 - s.prob(k)) * coins > 1 else "volunteer"


def test_bayes_rule_is_optimal_under_the_team_variant() -> None:
    rng = np.random.default_rng(7)
    grid = [i / (i + j) for i in range(1, 12) for j in range(1, 6)]  # Beta posterior means
    checked = 0
    for _ in range(3000):
        coins = int(rng.integers(0, 5))
        m = int(rng.integers(0, 4))
        uncertain = rng.choice([2, 3, 4], size=m, replace=False)
        probs = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
        for k in uncertain:
            probs[int(k)] = float(rng.choice(grid))
        s = State.of(coins, probs, alive=int(rng.integers(2, 5)), rounds_left=int(rng.integers(2, 5)))
        values = action_values(s, ALL, "team")
        choice = _bayes(s, coins)
        assert values[choice] >= max(values.values()) - EPS, (s, values, choice)
        checked += 1
    assert checked == 3000


def _random_state(rng: np.random.Generator) -> State:
    m = int(rng.integers(0, 4))
    puzzles = [2, 3, 4][:m]
    probs = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    for k in puzzles:
        probs[k] = float(rng.uniform(0.05, 0.95))
    failed = [puzzles[: int(rng.integers(1, m + 1))]] if m and rng.random() < 0.4 else []
    return State.of(
        int(rng.integers(0, 5)),
        probs,
        alive=int(rng.integers(1, 5)),
        rounds_left=int(rng.integers(1, 5)),
        failed=failed,
    )


@pytest.mark.parametrize("variant", ["team", "self_reliant"])
def test_monte_carlo_agrees_with_the_analytic_values(variant: str) -> None:
    """Many sampled states, every legal action: analytic EV within Monte Carlo error of the simulated mean."""
    rng = np.random.default_rng(2026)
    z = []
    for _ in range(120):
        s = _random_state(rng)
        for action, ev in action_values(s, ALL, variant).items():
            mean, se = simulate(s, action, n=20_000, rng=rng, variant=variant)
            if se == 0:
                assert mean == pytest.approx(ev, abs=1e-9), (s, action)
                continue
            z.append((mean - ev) / se)
            assert abs(mean - ev) < 4.5 * se + 1e-9, (s, action, ev, mean, se)
    z = np.asarray(z)
    assert len(z) > 150
    assert 0.6 < float(np.mean(z**2)) < 1.5  # the errors are Monte Carlo noise, not a bias
    assert abs(float(np.mean(z))) < 4 / np.sqrt(len(z))


def test_value_is_the_best_action() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        s = _random_state(rng)
        for variant in ("team", "self_reliant"):
            assert value(s, variant) == pytest.approx(max(action_values(s, ALL, variant).values()))


def test_bad_variant_and_state_are_refused() -> None:
    s = State.of(4, {1: 1.0, 2: 0.5, 3: 1.0, 4: 1.0}, alive=4, rounds_left=4)
    with pytest.raises(ValueError, match="unknown model variant"):
        action_values(s, ALL, "selfish")
    with pytest.raises(ValueError):
        State(4, (2,), (0.5, 0.6), 4, 4)  # not a distribution
