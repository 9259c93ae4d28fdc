"""Trust-game rules as plain deterministic code: amounts, bounds, payoffs, horizon, surplus.

A trustor with endowment E sends an integer s in 0..E; the trustee receives k·s and returns an integer r in
0..k·s. Payoffs: trustor E − s + r, trustee E_t + k·s − r (Berg, Dickhaut & McCabe 1995).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

_INT_TEXT = re.compile(r"^[+-]?\d+(?:\.0*)?$")


@dataclass(frozen=True, slots=True)
class Amount:
    """A validated amount: ``value`` is what the rules use (0 when invalid), ``raw`` the text as given."""

    value: int
    valid: bool
    raw: str
    reason: str | None = None


def parse_amount(raw: Any, maximum: int) -> Amount:
    """Validate an amount in ``0..maximum``.

    Accepts an int, an integral float (``5.0``) or a string holding one (``" 7 "``); anything else (a
    fraction, a word, a bool, a value out of range, a missing value) is invalid: recorded with the raw
    text and the reason, and resolved as 0.
    """
    text = "" if raw is None else (raw if isinstance(raw, str) else _text(raw))
    if raw is None:
        return Amount(0, False, text, "missing")
    if isinstance(raw, bool):
        return Amount(0, False, text, "not_an_integer")
    value: int | None = None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float):
        if math.isfinite(raw) and raw.is_integer():
            value = int(raw)
    elif isinstance(raw, str) and _INT_TEXT.match(raw.strip()):
        value = int(float(raw.strip()))
    if value is None:
        return Amount(0, False, text, "not_an_integer")
    if not 0 <= value <= maximum:
        return Amount(0, False, text, "out_of_range")
    return Amount(value, True, text)


def _text(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


def round_half_up(x: float) -> int:
    """Round to the nearest integer, halves up (7.5 → 8), unlike Python's banker's rounding."""
    return math.floor(x + 0.5)


@dataclass(frozen=True, slots=True)
class Stakes:
    """Endowments and multiplier of one exchange."""

    endowment: int = 10  # E, the trustor's endowment
    trustee_endowment: int = 10  # E_t
    multiplier: int = 3  # k

    def __post_init__(self) -> None:
        if self.endowment < 1:
            raise ValueError(f"endowment must be >= 1, got {self.endowment}")
        if self.trustee_endowment < 0:
            raise ValueError(f"trustee_endowment must be >= 0, got {self.trustee_endowment}")
        if self.multiplier < 1:
            raise ValueError(f"multiplier must be >= 1, got {self.multiplier}")

    def received(self, sent: int) -> int:
        """What the trustee receives: k·s."""
        return self.multiplier * sent

    def max_return(self, sent: int) -> int:
        """The most the trustee can return: k·s."""
        return self.multiplier * sent

    def check(self, sent: int, returned: int) -> None:
        """Raise ValueError unless 0 ≤ s ≤ E and 0 ≤ r ≤ k·s."""
        if not 0 <= sent <= self.endowment:
            raise ValueError(f"sent must be in 0..{self.endowment}, got {sent}")
        if not 0 <= returned <= self.max_return(sent):
            raise ValueError(f"returned must be in 0..{self.max_return(sent)}, got {returned}")

    def payoffs(self, sent: int, returned: int) -> tuple[int, int]:
        """(trustor, trustee) payoffs: E − s + r and E_t + k·s − r."""
        self.check(sent, returned)
        return self.endowment - sent + returned, self.trustee_endowment + self.received(sent) - returned

    def surplus(self, sent: int) -> int:
        """Surplus created by sending s: (k − 1)·s."""
        return (self.multiplier - 1) * sent

    def max_surplus(self) -> int:
        """The largest surplus one exchange can create: (k − 1)·E."""
        return (self.multiplier - 1) * self.endowment


def return_ratio(sent: int, returned: int, multiplier: int) -> float | None:
    """r / (k·s), None when nothing was sent."""
    return returned / (multiplier * sent) if sent > 0 else None
