"""The reliance section of the trust card: accuracy, success, regret and test use on the main library, and
agreement on the pairs (from this package's analysis)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.calibration.load import model_label
from analysis.card.figures import Figure, analysis_tables, figure_from_row, from_values, not_run, valid_share
from analysis.family_registry import CardData
from analysis.rundirs import read_table

GAME = "reliance"
KEYS = (
    "rel_macro_accuracy",
    "rel_all_stage_success",
    "rel_normalised_regret",
    "rel_test_use",
    "rel_pairs_relation",
)


def figures(data: CardData) -> Any:
    """Per subject: the reliance figures (the analysis runs only when the runs hold reliance jobs)."""
    tables = stages = None
    if GAME in data.present:
        tables = analysis_tables("reliance", data.run_paths, resamples=data.resamples, seed=data.seed)
    stages = pd.DataFrame()
    if tables is not None:
        from analysis.reliance.load import load as load_reliance

        stages = load_reliance(data.run_paths).stages
    return lambda subject: reliance(subject, tables, stages, resamples=data.resamples, seed=data.seed)


def invalid(run: Any, subject: Any) -> tuple[int, int]:
    """Invalid answers of one run (every stage is the agent under test's)."""
    table = read_table(run, "stages.csv", cell_keys=False)
    return valid_share(table["valid"]) if table is not None else (0, 0)


def system_rows(table: pd.DataFrame | None, subject: Any) -> pd.DataFrame:
    """Rows of a reliance table (``system`` = the model for LLM runs, the agent for scripted ones)."""
    if table is None or table.empty or "system" not in table.columns:
        return pd.DataFrame()
    names = table["system"].astype(str)
    keep = names.map(model_label) == subject.name if subject.llm else names.isin(subject.agents)
    return table[keep]


def reliance(
    subject: Any, tables: dict[str, pd.DataFrame] | None, stages: pd.DataFrame, *, resamples: int, seed: int
) -> dict[str, Figure]:
    keys = {
        "rel_macro_accuracy": "macro accuracy (main library)",
        "rel_all_stage_success": "all-stage success",
        "rel_normalised_regret": "normalised regret",
        "rel_test_use": "test use (share of decisions that test)",
        "rel_pairs_relation": "pairs: relation agreement",
    }
    if tables is None:
        return {k: not_run(k, v) for k, v in keys.items()}
    out: dict[str, Figure] = {}
    main = system_rows(tables.get("main_metrics"), subject)
    row = main.iloc[0] if not main.empty else None
    for col in ("macro_accuracy", "all_stage_success", "normalised_regret"):
        k = f"rel_{col}"
        n = int(row["blueprints"]) if row is not None and pd.notna(row.get("blueprints")) else None
        out[k] = figure_from_row(k, keys[k], row, col, n=n)
    sub = stages[[subject.matches(m, a) for m, a in zip(stages["model"], stages["agent"], strict=True)]] if len(
        stages) else stages  # fmt: skip
    sub = sub[sub["set"].astype(str) == "main"] if len(sub) else sub
    if len(sub):
        from analysis.stats import cluster_bootstrap_mean

        iv = cluster_bootstrap_mean(sub["is_test"].astype(bool).astype(float).to_numpy(),
                                    sub["blueprint"].astype(str).to_numpy(), n_resamples=resamples, seed=seed)  # fmt: skip
        nb = sub["blueprint"].nunique()
        out["rel_test_use"] = from_values("rel_test_use", keys["rel_test_use"], iv.estimate, iv.low, iv.high,
                                          n=nb, note=f"{len(sub)} decisions, {nb} blueprints" + (
                                              f"; {iv.note}" if iv.note else ""),
                                          underpowered=nb < 10 or iv.low != iv.low)  # fmt: skip
    else:
        out["rel_test_use"] = not_run("rel_test_use", keys["rel_test_use"])
    pairs = system_rows(tables.get("pairs"), subject)
    rel = pairs[pairs["metric"] == "relation_agreement"] if not pairs.empty else pairs
    if rel.empty:
        out["rel_pairs_relation"] = not_run("rel_pairs_relation", keys["rel_pairs_relation"])
    else:
        r = rel.iloc[0]
        n = int(r["n"]) if pd.notna(r["n"]) else 0
        out["rel_pairs_relation"] = from_values(
            "rel_pairs_relation", keys["rel_pairs_relation"], r["share"], r["low"], r["high"], n=n,
            note=f"{int(r['k'])}/{n} pairs (Wilson interval)", underpowered=n < 10,
        )  # fmt: skip
    return out
