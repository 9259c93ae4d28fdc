"""One figure of a trust card: a value with its interval, or an explicit reason why there is none."""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.text import interval_text

NOT_RUN = "not run"
UNDERPOWERED = "underpowered"
OK = "ok"
UNAVAILABLE = "not available"


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


@dataclass(frozen=True)
class Figure:
    """A card cell.

    ``status`` is ``ok`` (estimate, usually with an interval), ``underpowered`` (estimate shown, the interval
    missing or the sample below the analysis's minimum; ``note`` says why), ``not run`` (no data for this
    part of the battery) or ``not available`` (the measure cannot be computed from these data).
    """

    key: str
    label: str
    estimate: float = math.nan
    low: float = math.nan
    high: float = math.nan
    n: int | None = None
    status: str = OK
    note: str = ""
    digits: int = 2
    unit: str = ""
    reference: str = ""  # e.g. the human reference value the estimate is compared with
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def text(self) -> str:
        """The cell as shown on the card: never an empty string that could be read as zero."""
        if self.status == NOT_RUN:
            return "not run"
        if self.status == UNAVAILABLE or math.isnan(self.estimate):
            return f"n/a ({self.note})" if self.note else "n/a"
        est = interval_text(self.estimate, self.low, self.high, self.digits, unit=self.unit)
        if self.status == UNDERPOWERED:
            n = f"n={self.n}" if self.n is not None else self.note or "small sample"
            est += f" (underpowered, {n})"
        return est


def not_run(key: str, label: str, note: str = "") -> Figure:
    return Figure(key, label, status=NOT_RUN, note=note)


def unavailable(key: str, label: str, note: str) -> Figure:
    return Figure(key, label, status=UNAVAILABLE, note=note)


def from_values(
    key: str,
    label: str,
    estimate: Any,
    low: Any = math.nan,
    high: Any = math.nan,
    *,
    n: int | None = None,
    note: str = "",
    underpowered: bool | None = None,
    digits: int = 2,
    unit: str = "",
    reference: str = "",
) -> Figure:
    """A figure from numbers; underpowered when flagged, or when the interval is missing (with a note)."""
    est, lo, hi = _num(estimate), _num(low), _num(high)
    if math.isnan(est):
        return Figure(key, label, status=UNAVAILABLE, note=note or "no estimate", n=n, reference=reference)
    if underpowered is None:
        underpowered = math.isnan(lo) or math.isnan(hi) or "underpowered" in str(note)
    status = UNDERPOWERED if underpowered else OK
    return Figure(key, label, est, lo, hi, n, status, str(note or ""), digits, unit, reference)


# -- reading a section's rows ------------------------------------------------------------------------------
def rows_of(
    table: pd.DataFrame | None, subject: Any, model: str = "model", agent: str = "agent"
) -> pd.DataFrame:
    """The rows of an analysis table that belong to a card's subject (``subject.matches(model, agent)``)."""
    if table is None or table.empty or model not in table.columns:
        return pd.DataFrame()
    agents = table[agent] if agent in table.columns else pd.Series([""] * len(table), index=table.index)
    keep = [subject.matches(mv, av) for mv, av in zip(table[model], agents, strict=True)]
    return table[keep]


def analysis_tables(package: str, paths: list[str], **options: Any) -> dict[str, pd.DataFrame] | None:
    """The tables of ``python -m analysis <package>`` over ``paths`` (None when it finds nothing to analyse)."""
    from analysis.api import AnalysisError

    module = importlib.import_module(f"analysis.{package}")
    try:
        return module.analyse(paths, **options).tables
    except AnalysisError:
        return None


def figure_from_row(key: str, label: str, row: pd.Series | None, col: str, **kw: Any) -> Figure:
    """The figure of column ``col`` of an analysis row (``col_low``/``col_high`` its interval, ``note``)."""
    if row is None:
        return not_run(key, label)
    note = str(row.get("note", "") if isinstance(row.get("note", ""), str) else "")
    return from_values(
        key, label, row.get(col), row.get(f"{col}_low"), row.get(f"{col}_high"), note=note, **kw
    )


def valid_share(flags: pd.Series) -> tuple[int, int]:
    """(invalid, all) of a column of ``valid`` cells."""
    valid = flags.astype(str).str.lower().isin(["true", "1"])
    return int((~valid).sum()), len(valid)
