"""The trust game's section of the trust card: sent fraction as trustor and return ratio as trustee against
the human-reference players (from this package's analysis)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.card.figures import Figure, analysis_tables, figure_from_row, not_run, rows_of, valid_share
from analysis.family_registry import CardData
from analysis.rundirs import read_table

GAME = "trust_game"
KEYS = ("tg_sent_fraction", "tg_return_ratio")


def figures(data: CardData) -> Any:
    """Per subject: the trust-game figures (the analysis runs only when the runs hold trust-game jobs)."""
    tables = None
    if GAME in data.present:
        tables = analysis_tables("trust_game", data.run_paths, resamples=data.resamples, seed=data.seed)
    return lambda subject: trust_game(subject, tables)


def llm_run(config: dict[str, Any]) -> bool:
    """Whether a role of the run is played by the ``llm`` agent (``game.trustor`` / ``game.trustee``)."""
    game = config.get("game") or {}
    roles = [game.get("trustor"), game.get("trustee")]
    return any(r == "llm" or (isinstance(r, dict) and r.get("name") == "llm") for r in roles)


def invalid(run: Any, subject: Any) -> tuple[int, int]:
    """Invalid answers of the roles the subject played in one run (a trustee only where it was asked)."""
    t = read_table(run, "exchanges.csv", cell_keys=False)
    if t is None:
        return 0, 0
    cols = []
    if len(t) and subject.matches(t["trustor_model"].iloc[0], t["trustor"].iloc[0]):
        cols.append(t["sent_valid"])
    if len(t) and subject.matches(t["trustee_model"].iloc[0], t["trustee"].iloc[0]):
        cols.append(t["returned_valid"][t["trustee_asked"].astype(str).str.lower().isin(["true", "1"])])
    return valid_share(pd.concat(cols)) if cols else (0, 0)


def trust_game(subject: Any, tables: dict[str, pd.DataFrame] | None) -> dict[str, Figure]:
    keys = {"tg_sent_fraction": "sent fraction (as trustor)", "tg_return_ratio": "return ratio (as trustee)"}
    summary = tables.get("summary") if tables else None
    comparison = tables.get("reference_comparison") if tables else None
    if summary is None or summary.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    out: dict[str, Figure] = {}
    for key, role, other, col, measure in (
        ("tg_sent_fraction", "trustor", "trustee", "sent_fraction", "sent fraction (first round)"),
        ("tg_return_ratio", "trustee", "trustor", "return_ratio_pooled", "return ratio (pooled)"),
    ):
        mine = rows_of(summary, subject, f"{role}_model", role)
        mine = mine[mine[other].astype(str) == "tg_human"] if not mine.empty else mine
        if mine.empty:
            out[key] = not_run(key, keys[key])
            continue
        row = mine.iloc[0]
        ref = ""
        if comparison is not None and not comparison.empty:
            c = comparison[(comparison[role] == row[role]) & (comparison[other] == row[other])
                           & (comparison["measure"] == measure)]  # fmt: skip
            if not c.empty:
                ref = (
                    f"human {c.iloc[0]['reference_value']:.2f} ({str(c.iloc[0]['reference']).split(',')[0]})"
                )
        n = int(row["pairs"])
        out[key] = figure_from_row(key, keys[key], row, col, n=n, reference=ref, underpowered=n < 10 or None)
    return out
