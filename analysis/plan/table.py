"""The plan: per cell (and per compared pair) the variance, today's width and the sessions a target needs.

``plan.csv`` has one row per cell to run (plus the anchors of delta measures): its keys, today's estimate and
interval, the variance components, the sessions the target needs (assured and at face value), the
``runs`` its job should use and the Hydra ``overrides`` that run it. ``comparisons.csv`` (``--compare``)
has one row per pair of cells that differ only in the compared key.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.plan import clusters
from analysis.plan.cells import PlanCell
from analysis.plan.design import Plan, Variance, combine, fit, sessions_for_power, sessions_for_width


@dataclass(frozen=True)
class Target:
    """What the plan aims for: a half-width at a level, with an assurance; optionally a power."""

    width: float
    level: float = 0.95
    assurance: float = 0.9
    effect: float | None = None
    power: float = 0.8


@dataclass
class Row:
    """One planned quantity (a cell, a delta, or a compared pair) with its variance and plan."""

    cell: PlanCell
    variance: Variance
    width: Plan
    power: Plan | None
    planned_by: str = ""
    runs: int | None = None
    notes: list[str] = field(default_factory=list)
    own_target: bool = True  # False: the row runs for others (an anchor, a compared cell)


def _plans(var: Variance, target: Target) -> tuple[Plan, Plan | None]:
    width = sessions_for_width(var, target.width, target.level, target.assurance)
    power = (
        sessions_for_power(var, target.effect, target.level, target.power, target.assurance)
        if target.effect is not None
        else None
    )
    return width, power


def _needed(width: Plan, power: Plan | None) -> int | None:
    values = [width.sessions] + ([power.sessions] if power is not None else [])
    return None if any(v is None for v in values) else max(v for v in values if v is not None)


def plan_cells(cells: Sequence[PlanCell], target: Target) -> list[Row]:
    """A row per cell: its own measure (or its delta against its anchor); anchors run as many sessions as
    the most demanding cell that uses them (equal sessions for a cell and its anchor)."""
    rows: list[Row] = []
    anchors: dict[int, Row] = {}
    for cell in cells:
        if cell.role == "anchor":
            anchors[id(cell)] = Row(cell, fit(cell.units), Plan(None, None), None, own_target=False)
            continue
        own = fit(cell.units)
        notes = [cell.anchor_note] if cell.anchor_note else []
        var = own
        if cell.anchor is not None:
            var = combine([own, fit(cell.anchor.units)], [1.0, -1.0])
        width, power = _plans(var, target)
        row = Row(cell, var, width, power, notes=notes)
        row.runs = _needed(width, power)
        rows.append(row)
    for row in rows:
        if row.cell.anchor is None or row.runs is None:
            continue
        anchor = anchors[id(row.cell.anchor)]
        anchor.runs = max(anchor.runs or 0, row.runs)
        anchor.planned_by = "anchor of the deltas (as many sessions as its most demanding cell)"
    return rows + list(anchors.values())


def compare_cells(
    cells: Sequence[PlanCell], key: str, target: Target, *, n_resamples: int, seed: int
) -> tuple[list[Row], list[dict[str, object]]]:
    """Pairs of cells equal in every key but ``key``: the difference's variance and plan; each cell runs
    the most its pairs need (equal sessions per cell)."""
    rows = {
        id(c): Row(c, fit(c.units), Plan(None, None), None, own_target=False)
        for c in cells
        if c.role == "cell"
    }
    pairs: list[dict[str, object]] = []
    listed = [c for c in cells if c.role == "cell"]
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            if key not in a.keys or a.keys[key] == b.keys[key]:
                continue
            if any(a.keys[k] != b.keys.get(k) for k in a.keys if k != key):
                continue
            var = combine([rows[id(a)].variance, rows[id(b)].variance], [1.0, -1.0])
            width, power = _plans(var, target)
            now = clusters.difference(
                a.units, b.units, n_resamples=n_resamples, seed=seed, level=target.level
            )
            needed = _needed(width, power)
            for c, other in ((a, b), (b, a)):
                row = rows[id(c)]
                if needed is not None:
                    row.runs = max(row.runs or 0, needed)
                row.planned_by = "; ".join(filter(None, [row.planned_by, f"vs {other.keys[key]}"]))
            pairs.append(_pair_record(a, b, key, var, width, power, now, target))
    if not pairs:
        raise ValueError(f"--compare {key}: no two cells differ only in {key!r}")
    return list(rows.values()), pairs


def _pair_record(
    a: PlanCell, b: PlanCell, key: str, var: Variance, width: Plan, power: Plan | None, now: object,
    target: Target,
) -> dict[str, object]:  # fmt: skip
    same = {k: v for k, v in a.keys.items() if k != key}
    record: dict[str, object] = {
        **{f"{k}": v for k, v in same.items()},
        "compared": key,
        "a": a.keys[key],
        "b": b.keys[key],
        "difference": var.estimate,
        **_interval_columns(now),
        "sessions_now": min(var.sessions, 10**9),
        "per_session_var": var.per_session,
        "df": var.df,
        **_plan_columns(var, width, power, target),
    }
    return record


def _interval_columns(iv: object) -> dict[str, object]:
    low, high = getattr(iv, "low", math.nan), getattr(iv, "high", math.nan)
    half = (high - low) / 2 if math.isfinite(low) and math.isfinite(high) else math.nan
    return {"low": low, "high": high, "half_width_now": half, "interval_note": getattr(iv, "note", "")}


def _plan_columns(var: Variance, width: Plan, power: Plan | None, target: Target) -> dict[str, object]:
    out: dict[str, object] = {
        "target_half_width": target.width,
        "sessions": width.sessions,
        "sessions_expected": width.expected,
        "half_width_planned": var.half_width(width.sessions, target.level)
        if width.sessions is not None and var.known
        else math.nan,
    }
    if power is not None:
        out.update({"effect": target.effect, "power": target.power, "sessions_power": power.sessions,
                    "sessions_power_expected": power.expected})  # fmt: skip
    notes = [n for n in (width.note, power.note if power else "") if n]
    out["plan_note"] = "; ".join(dict.fromkeys(notes))
    return out


def rows_frame(rows: Sequence[Row], measure: str, target: Target) -> pd.DataFrame:
    """``plan.csv``: one row per cell to run."""
    records = []
    for row in rows:
        var, cell = row.variance, row.cell
        record: dict[str, object] = {
            "measure": measure,
            "role": cell.role,
            **cell.keys,
            "label": cell.label,
            "design": var.design,
            "estimate": cell.current.estimate if math.isfinite(cell.current.estimate) else var.estimate,
            **_interval_columns(cell.current),
            "sessions_now": var.sessions,
            "units_per_session": var.units_per_session,
            "between_var": var.between,
            "within_var": var.within,
            "per_session_var": var.per_session,
            "floor_var": var.floor,
            "df": var.df,
            "level": target.level,
            "assurance": target.assurance,
        }
        if row.own_target:
            record.update(_plan_columns(var, row.width, row.power, target))
        else:
            record.update({"target_half_width": target.width, "sessions": None, "sessions_expected": None,
                           "half_width_planned": math.nan, "plan_note": ""})  # fmt: skip
        record["runs"] = row.runs
        record["planned_by"] = row.planned_by or "its own target"
        record["cell_note"] = "; ".join(dict.fromkeys(n for n in [var.note, *row.notes] if n))
        record["overrides"] = shlex.join(cell.overrides)
        record["overrides_note"] = cell.overrides_note
        records.append(record)
    frame = pd.DataFrame(records)
    for col in ("sessions", "sessions_expected", "runs", "sessions_power", "sessions_power_expected"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")
    return frame


def runs_column(frame: pd.DataFrame) -> np.ndarray:
    """The ``runs`` of each row as floats (NaN where there is no plan)."""
    return pd.to_numeric(frame["runs"], errors="coerce").to_numpy(dtype=float)
