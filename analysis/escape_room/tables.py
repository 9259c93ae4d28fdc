"""Paper tables (CSV + Markdown) from cell measures and deltas.

CSV cells hold numbers (empty where a value does not exist) and every row with a missing value carries a
``note`` saying why; Markdown cells show ``estimate [low, high]`` or the reason in words.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from analysis.escape_room.measures import MEASURE_LABELS, AnchorCell, CellResult, Delta
from analysis.escape_room.schedules import schedule_sort_key
from analysis.escape_room.schema import CELL_KEYS
from analysis.outputs import markdown_table as markdown_table  # re-exported: the trust tables' writers
from analysis.outputs import write_table as write_table
from analysis.stats import Interval

SCORE_DRIVER_MEASURES = (
    "volume", "protective_per_game", "volunteers_per_game", "rounds_per_game", "death_share_wrong_password",
    "death_share_no_volunteer", "survival", "escape_rate", "coins_per_agent_game",
)  # fmt: skip


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def interval_columns(prefix: str, iv: Interval | None, *, with_sig: bool = False) -> dict[str, object]:
    """``{prefix: est, prefix_low: ..., prefix_high: ...}`` (None where missing) and a note entry."""
    if iv is None:
        iv = Interval(math.nan, math.nan, math.nan, 0, "cell not in the data")
    out: dict[str, object] = {
        prefix: _num(iv.estimate),
        f"{prefix}_low": _num(iv.low),
        f"{prefix}_high": _num(iv.high),
    }
    if with_sig:
        out[f"{prefix}_significant"] = iv.significant if iv.has_interval else None
    out[f"_note_{prefix}"] = iv.note
    return out


def _collect_notes(row: dict[str, object]) -> dict[str, object]:
    notes = [f"{k[6:]}: {v}" for k, v in row.items() if k.startswith("_note_") and v]
    clean = {k: v for k, v in row.items() if not k.startswith("_note_")}
    clean["note"] = "; ".join(notes)
    return clean


def _fmt(iv: Interval | None, digits: int) -> str:
    if iv is None:
        return "—"
    return iv.format(digits)


def _find(cells: Iterable[CellResult], **keys: str) -> CellResult | None:
    for c in cells:
        if all(c.keys.get(k) == v for k, v in keys.items()):
            return c
    return None


def _delta(deltas: Iterable[Delta], measure: str, **keys: str) -> Delta | None:
    for d in deltas:
        if d.measure == measure and all(d.keys.get(k) == v for k, v in keys.items()):
            return d
    return None


def _who(keys: dict[str, str], cells: list[CellResult]) -> str:
    """Model name, with the agent kind / partner slot appended when the data hold several of them."""
    name = keys["model"]
    extra = [keys[k] for k in ("agent", "partner_slot") if len({c.keys[k] for c in cells}) > 1]
    return f"{name} ({', '.join(extra)})" if extra else name


def _models(cells: list[CellResult]) -> list[tuple[str, str, str]]:
    return sorted({(c.keys["model"], c.keys["agent"], c.keys["partner_slot"]) for c in cells})


def _memories(cells: list[CellResult]) -> list[str]:
    return sorted({c.keys["memory"] for c in cells if c.keys["memory"] != "none"})


def trust_formation(
    cells: list[CellResult], anchors: dict[tuple[str, str, str], AnchorCell], deltas: list[Delta]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Verifications/game: anchor, smooth, 1strike and Δtrust = smooth − anchor (CSV frame, Markdown frame)."""
    return _formation_like(cells, anchors, deltas, "volume", "delta_trust", "smooth", 2)


def culprit_targeting(
    cells: list[CellResult], anchors: dict[tuple[str, str, str], AnchorCell], deltas: list[Delta]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partner share: anchor, smooth, 1strike and Δtarget = share(1strike) − share(anchor)."""
    return _formation_like(cells, anchors, deltas, "partner_share", "delta_target", "1strike", 3)


def _formation_like(
    cells: list[CellResult],
    anchors: dict[tuple[str, str, str], AnchorCell],
    deltas: list[Delta],
    measure: str,
    delta_name: str,
    delta_schedule: str,
    digits: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, md = [], []
    for model, agent, slot in _models(cells):
        anchor = anchors.get((model, agent, slot))
        a_iv = getattr(anchor, measure) if anchor else None
        for memory in _memories(cells) or ["transcript"]:
            base = {"model": model, "agent": agent, "partner_slot": slot, "memory": memory}
            sm = _find(cells, **base, schedule="smooth")
            st = _find(cells, **base, schedule="1strike")
            if sm is None and st is None:
                continue
            d = _delta(deltas, delta_name, **base, schedule=delta_schedule)
            d_iv = d.interval if d else None
            row = {
                **base,
                "anchor_source": anchor.source if anchor else "none",
                **interval_columns("anchor", a_iv),
                **interval_columns("smooth", sm.measures[measure] if sm else None),
                **interval_columns("1strike", st.measures[measure] if st else None),
                **interval_columns(delta_name, d_iv, with_sig=True),
            }
            rows.append(_collect_notes(row))
            md.append(
                {
                    "model": _who(base, cells),
                    "memory": memory,
                    "anchor": _fmt(a_iv, digits) if a_iv else "no anchor",
                    "smooth": _fmt(sm.measures[measure] if sm else None, digits),
                    "1strike": _fmt(st.measures[measure] if st else None, digits),
                    delta_name: _fmt(d_iv, digits),
                    "significant": _sig(d_iv),
                }
            )
    return pd.DataFrame(rows), pd.DataFrame(md)


def _sig(iv: Interval | None) -> str:
    if iv is None or math.isnan(iv.estimate):
        return "n/a"
    if not iv.has_interval:
        return "no interval"
    return "yes" if iv.significant else "no"


def score_drivers(cells: list[CellResult]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Verifies/game, protective verifies, volunteers, rounds, death-cause shares, survival, coins per cell."""
    rows, md = [], []
    for c in cells:
        row: dict[str, object] = {**c.keys, "runs": c.n_runs, "games": c.n_games}
        label = f"{_who(c.keys, cells)} / {c.keys['schedule']} / {c.keys['memory']}"
        mrow: dict[str, object] = {"cell": label, "games": c.n_games}
        for m in SCORE_DRIVER_MEASURES:
            row.update(interval_columns(m, c.measures[m]))
            mrow[MEASURE_LABELS[m]] = _fmt(c.measures[m], 2)
        rows.append(_collect_notes(row))
        md.append(mrow)
    return pd.DataFrame(rows), pd.DataFrame(md)


def score_matrix(cells: list[CellResult]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Coins per agent-game: rows schedule × memory, columns model."""
    models = _models(cells)
    scen = sorted(
        {(c.keys["schedule"], c.keys["memory"]) for c in cells}, key=lambda x: (schedule_sort_key(x[0]), x[1])
    )
    rows, md = [], []
    for schedule, memory in scen:
        row: dict[str, object] = {"schedule": schedule, "memory": memory}
        mrow: dict[str, object] = {"schedule": schedule, "memory": memory}
        for model, agent, slot in models:
            c = _find(cells, model=model, agent=agent, partner_slot=slot, schedule=schedule, memory=memory)
            who = _who({"model": model, "agent": agent, "partner_slot": slot}, cells)
            iv = (
                c.measures["coins_per_agent_game"]
                if c
                else Interval(math.nan, math.nan, math.nan, 0, "not run")
            )
            row.update(interval_columns(who, iv))
            mrow[who] = _fmt(iv, 2) if c else "—"
        rows.append(_collect_notes(row))
        md.append(mrow)
    return pd.DataFrame(rows), pd.DataFrame(md)


def schedule_sweep(cells: list[CellResult], deltas: list[Delta]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Volume and partner share per schedule (D-correct, and D-wrong as secondary) with Δtrust/Δtarget."""
    rows, md = [], []
    for c in cells:
        dt = _delta(deltas, "delta_trust", **c.keys)
        dg = _delta(deltas, "delta_target", **c.keys)
        row: dict[str, object] = {**c.keys, "runs": c.n_runs, "games_dcorrect": c.n_games_dcorrect,
                                  "games_dwrong": c.n_games_dwrong, "clusters": c.n_clusters,
                                  "cluster_unit": c.cluster_unit}  # fmt: skip
        for m in ("volume", "partner_share", "volume_dwrong", "partner_share_dwrong"):
            row.update(interval_columns(m, c.measures[m]))
        row.update(interval_columns("delta_trust", dt.interval if dt else None, with_sig=True))
        row.update(interval_columns("delta_target", dg.interval if dg else None, with_sig=True))
        if dt is None:
            row["_note_delta_trust"] = (
                "memoryless cell (the anchor itself)" if c.keys["memory"] == "none" else ""
            )
            row["_note_delta_target"] = row["_note_delta_trust"]
        rows.append(_collect_notes(row))
        md.append(
            {
                "model": _who(c.keys, cells),
                "schedule": c.keys["schedule"],
                "memory": c.keys["memory"],
                "runs": c.n_runs,
                "D-correct games": c.n_games_dcorrect,
                "verif./game": _fmt(c.measures["volume"], 2),
                "partner share": _fmt(c.measures["partner_share"], 3),
                "verif./game (D wrong)": _fmt(c.measures["volume_dwrong"], 2),
                "partner share (D wrong)": _fmt(c.measures["partner_share_dwrong"], 3),
                "Δtrust": _fmt(dt.interval, 2) + (" *" if dt.interval.significant else "") if dt else "—",
                "Δtarget": _fmt(dg.interval, 3) + (" *" if dg.interval.significant else "") if dg else "—",
            }
        )
    return pd.DataFrame(rows), pd.DataFrame(md)


def cells_long(cells: list[CellResult]) -> pd.DataFrame:
    """Every measure of every cell, one row each (estimate, low, high, clusters, note)."""
    rows = []
    for c in cells:
        for name, iv in c.measures.items():
            rows.append(
                {
                    **{k: c.keys[k] for k in CELL_KEYS},
                    "measure": name,
                    "estimate": _num(iv.estimate),
                    "low": _num(iv.low),
                    "high": _num(iv.high),
                    "clusters": iv.n_clusters,
                    "cluster_unit": c.cluster_unit,
                    "note": iv.note,
                }
            )
    return pd.DataFrame(rows)
