"""The public-goods rules as plain deterministic code."""

from __future__ import annotations


def payoffs(contributions: dict[str, int], endowment: int, multiplier: float) -> dict[str, float]:
    """Each player keeps what it did not contribute and gets an equal share of the multiplied pot."""
    share = multiplier * sum(contributions.values()) / len(contributions)
    return {seat: endowment - c + share for seat, c in contributions.items()}


def check_contribution(amount: int, endowment: int) -> int:
    """A contribution is a whole number of points from 0 to the endowment."""
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= endowment:
        raise ValueError(f"a contribution is a whole number from 0 to {endowment}, got {amount!r}")
    return amount
