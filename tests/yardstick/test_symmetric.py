"""The symmetric benchmark against a brute-force search on a two-round, two-seat toy game.

The toy: seats A and B under test (C is dead from the start), the partner D, two rounds, every seat at the
Beta(1, 1) prior (its own original right, each other original right with probability 1/2). The brute force
knows only the rules: it enumerates the 16 worlds under each seat's view, resolves the first round (coins,
verdicts, the volunteer drawn or the seat eliminated) and values the last round as the game's (a live seat
under test volunteers; the team escapes when every original still unverified is right). From those payoffs
it iterates best responses on the 5 × 5 game of first-round moves, from the reference rule, exactly as the
benchmark's levels do; the two must give the same moves, the same values and the same verdict (a fixed
point, or a cycle).
"""

from __future__ import annotations

import itertools

import pytest

from analysis.yardstick.evidence import WORLDS, bit
from analysis.yardstick.model import PASS, VOLUNTEER, GameTable, RoundState, reference_rule
from analysis.yardstick.symmetric import LevelTable, fixed_point

OWNERS = {1: "A", 2: "B", 3: "C", 4: "D"}
OWN = {"A": 1, "B": 2}
SEATS = ("A", "B")


def prior_view(own: int) -> tuple[float, ...]:
    return tuple(0.125 if w & bit(own) else 0.0 for w in WORLDS)


VIEWS = {"A": prior_view(1), "B": prior_view(2), "C": prior_view(3)}


def moves(seat: str) -> list[object]:
    return [VOLUNTEER, PASS, *(k for k in (1, 2, 3, 4) if k != OWN[seat])]


def payoff(seat: str, mine: object, theirs: object, coins: int) -> float:
    """The seat's expected score (under its own view) when it plays ``mine`` and the other seat ``theirs``
    in the first round, and the last round is played as the game's."""
    other = "B" if seat == "A" else "A"
    play = {seat: mine, other: theirs}
    left = {s: coins - isinstance(m, int) for s, m in play.items()}
    reveal = 0
    for m in play.values():
        reveal |= bit(m) if isinstance(m, int) else 0  # type: ignore[arg-type]
    volunteers = [s for s, m in play.items() if m == VOLUNTEER]
    total = 0.0
    for w, p in enumerate(VIEWS[seat]):
        if p == 0:
            continue
        later = (w | reveal) & 15 == 15  # the last round's password: every original unverified now right
        if volunteers:
            for v in volunteers:
                if w == 15:  # this round's password needs every original right
                    total += p * left[seat] / len(volunteers)
                elif v != seat:  # the volunteer died; the seat volunteers in the last round
                    total += p * left[seat] * later / len(volunteers)
        else:
            for victim in ("A", "B", "D"):
                if victim != seat:
                    total += p * left[seat] * later / 3
    return total


def reference(seat: str, coins: int) -> list[tuple[object, float]]:
    return reference_rule({k: 0.5 for k in (1, 2, 3, 4) if k != OWN[seat]}, coins)


def brute_force_levels(coins: int, levels: int) -> list[dict[str, object]]:
    """Best responses level by level (level 0: the reference rule, mixed over tied targets); ties go to the
    first best in the model's order (volunteer, pass, verifications by puzzle)."""
    mixed = {s: reference(s, coins) for s in SEATS}
    out = []
    for _ in range(levels):
        best = {}
        for seat in SEATS:
            other = "B" if seat == "A" else "A"
            values = {m: sum(q * payoff(seat, m, t, coins) for t, q in mixed[other]) for m in moves(seat)}
            top = max(values.values())
            best[seat] = next(m for m in moves(seat) if values[m] >= top - 1e-9)
        out.append(best)
        mixed = {s: [(m, 1.0)] for s, m in best.items()}
    return out


@pytest.mark.parametrize("coins", [1, 2, 3, 4, 5])
def test_levels_values_and_verdict_equal_the_brute_force(coins: int) -> None:
    state = RoundState(2, frozenset("ABD"), (coins, coins, 0), 0, 0)
    fp = fixed_point(OWNERS, VIEWS, [(s, state) for s in SEATS], max_levels=12)
    bf = brute_force_levels(coins, fp.levels)
    # the same best move of each seat at every level, and the same values of every first-round move
    level_tables, below = [], GameTable(OWNERS, VIEWS, "team")
    for level in range(1, fp.levels + 1):
        below = LevelTable(OWNERS, VIEWS, below, level)
        level_tables.append(below)
    assert len(level_tables) == fp.levels
    for level, lt in enumerate(level_tables):
        for seat in SEATS:
            assert lt.seat(seat).best_move(state) == bf[level][seat], (coins, level + 1, seat)
            other = "B" if seat == "A" else "A"
            theirs = reference(other, coins) if level == 0 else [(bf[level - 1][other], 1.0)]
            for m in moves(seat):
                want = sum(q * payoff(seat, m, t, coins) for t, q in theirs)
                assert lt.seat(seat).q(state, m) == pytest.approx(want, abs=1e-9), (coins, level + 1, seat, m)
    # the verdict: a fixed point when two consecutive levels agree, else a cycle
    repeats = [i for i in range(1, len(bf)) if bf[i] == bf[i - 1]]
    assert fp.converged == bool(repeats)
    if fp.converged:
        a, b = bf[-1]["A"], bf[-1]["B"]
        for seat, mine, theirs in (("A", a, b), ("B", b, a)):  # a best response to the other: an equilibrium
            best = max(payoff(seat, m, theirs, coins) for m in moves(seat))
            assert payoff(seat, mine, theirs, coins) == pytest.approx(best, abs=1e-9)
            assert fp.table.seat(seat).value(state) == pytest.approx(best, abs=1e-9)
    else:
        assert any(bf[i] == bf[j] for i, j in itertools.combinations(range(len(bf)), 2))


def test_the_toy_has_both_verdicts() -> None:
    """The grid reaches a fixed point somewhere and a cycle somewhere (the test above checks both kinds)."""
    verdicts = set()
    for coins in (1, 2, 3, 4, 5):
        state = RoundState(2, frozenset("ABD"), (coins, coins, 0), 0, 0)
        verdicts.add(fixed_point(OWNERS, VIEWS, [(s, state) for s in SEATS], max_levels=12).converged)
    assert verdicts == {True, False}
