"""The arena's section of the trust card: cooperation, retaliation, forgiveness and rank among the scripted
players (from this package's analysis)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.card.figures import (
    Figure,
    analysis_tables,
    figure_from_row,
    from_values,
    not_run,
    rows_of,
    valid_share,
)
from analysis.family_registry import CardData
from analysis.rundirs import read_table

GAME = "arena"
KEYS = ("arena_cooperation", "arena_retaliation", "arena_forgiveness", "arena_rank")


def figures(data: CardData) -> Any:
    """Per subject: the arena figures (the analysis runs only when the runs hold arena jobs)."""
    tables = None
    if GAME in data.present:
        tables = analysis_tables("arena", data.run_paths, resamples=data.resamples, seed=data.seed)
    return lambda subject: arena(subject, tables)


def invalid(run: Any, subject: Any) -> tuple[int, int]:
    """Invalid moves of the subject's players in one run."""
    table = read_table(run, "moves.csv", cell_keys=False)
    if table is None:
        return 0, 0
    mine = table[[subject.matches(m, a) for m, a in zip(table["model"], table["player"], strict=True)]]
    return valid_share(mine["valid"])


def arena(subject: Any, tables: dict[str, pd.DataFrame] | None) -> dict[str, Figure]:
    keys = {
        "arena_cooperation": "cooperation",
        "arena_retaliation": "retaliation",
        "arena_forgiveness": "forgiveness",
        "arena_rank": "score rank among the scripted players",
    }
    t = tables.get("tournament") if tables else None
    rows = rows_of(t, subject, "model", "player") if t is not None else pd.DataFrame()
    if t is None or rows.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    row = rows.sort_values("matches", ascending=False).iloc[0]
    n = int(row["matches"])
    under = not bool(row.get("ranked", True))
    out = {
        k: figure_from_row(k, keys[k], row, k.removeprefix("arena_"), n=n, underpowered=under or None)
        for k in ("arena_cooperation", "arena_retaliation", "arena_forgiveness")
    }
    field_ = t[t["matches"] > 0]
    rank = int((field_["payoff_per_round"] > row["payoff_per_round"]).sum()) + 1
    total = len(field_)
    note = f"payoff/round {row['payoff_per_round']:.2f} among {total} players"
    if under:
        note += f"; {row.get('note', '')}"
    out["arena_rank"] = from_values(
        "arena_rank", keys["arena_rank"], rank, row.get("rank_low"), row.get("rank_high"), n=n, note=note,
        underpowered=under, digits=0, unit=f" of {total}",
    )  # fmt: skip
    return out
