"""How every analysis writes a number with its interval and a Markdown table: one formatter each, so the
reports read alike."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, numbers.Real) and math.isnan(x))


def interval_text(
    est: Any,
    low: Any = None,
    high: Any = None,
    digits: int = 3,
    *,
    unit: str = "",
    missing: str = "n/a",
    alone: str = "",
) -> str:
    """``est[unit] [low, high]`` with ``digits`` decimals; ``missing`` when there is no estimate (None or NaN);
    the estimate followed by ``alone`` when a bound is missing."""
    if _missing(est):
        return missing
    text = f"{est:.{digits}f}{unit}"
    if _missing(low) or _missing(high):
        return text + alone
    return f"{text} [{low:.{digits}f}, {high:.{digits}f}]"


def row_interval(row: Mapping[str, Any], name: str, digits: int = 3, **options: Any) -> str:
    """:func:`interval_text` of a table row's ``name``, ``name_low`` and ``name_high`` (absent = missing)."""
    return interval_text(row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high"), digits, **options)


def md_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()) -> str:
    """A GitHub-flavoured Markdown table of formatted cells, without a final newline; ``align`` holds one of
    ``"l"`` and ``"r"`` per column (default: left)."""
    rule = [("---:" if a == "r" else "---") for a in [*align, *"l" * (len(header) - len(align))]]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
