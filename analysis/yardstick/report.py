"""The yardstick written out: ``decisions.csv``, ``summary.csv``, ``validation.csv`` and ``report.md``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.text import interval_text, md_table
from analysis.yardstick.model import MODEL_VERSION
from analysis.yardstick.score import LABEL, SYMMETRIC

MODEL_TEXT = (
    "each partner's reliability from the exact posterior of the session's public evidence (Beta({a:g}, {b:g}) "
    "prior), verifiers taken as exact, {teammates}, the partner passes, every action facing the game's "
    "elimination rule (if nobody volunteers, one live seat dies), a verification costing one coin, the seat "
    "then playing its best response"
)
TEAMMATES = {
    "team": "teammates playing the reference (bayes) rule on their exact beliefs",
    "self_reliant": "teammates passing",
    SYMMETRIC: "teammates playing the symmetric benchmark, the policy that is a best response when every seat "
    "plays it (iterated best responses from the reference rule; a decision whose iteration cycles has no value)",
}


def model_text(variant: str, prior: tuple[float, float]) -> str:
    """The model in one clause (``report.md``)."""
    return MODEL_TEXT.format(a=prior[0], b=prior[1], teammates=TEAMMATES[variant])


def report_text(
    tables: dict[str, pd.DataFrame],
    variant: str,
    prior: tuple[float, float],
    level: float,
) -> str:
    """``report.md``: what the yardstick is, the summary table and the Monte Carlo check."""
    summary, validation = tables["summary"], tables["validation"]
    lines = [
        f"# Escape-room yardstick (model {MODEL_VERSION})",
        "",
        f"**A {LABEL}.** Reference model `{MODEL_VERSION}`, variant `{variant}`: {model_text(variant, prior)}. "
        "Unit: expected score in coins (coins kept if the team escapes with the seat alive, else 0). Regret = "
        "best minus chosen expected score; a verification is *protective* when its expected value exceeds that "
        "of the best action without a verification, else *ritual*. See docs/yardstick.md.",
        "",
        f"Intervals: {level:.0%} cluster bootstrap (cluster: the game for memoryless runs, the session otherwise).",
        "",
    ]
    rows = [
        [
            str(r["source"]),
            str(r["model"]),
            f"{r['agent']}{f' (team {r.team})' if r['team'] else ''}",
            str(r["schedule"]),
            str(r["memory"]),
            str(r["n_decisions"]),
            interval_text(r["regret_mean"], r["regret_low"], r["regret_high"], alone=" (no interval)"),
            f"{r['best_share']:.2f}",
            str(r["n_verifications"]),
            interval_text(
                r["protective_share"], r["protective_low"], r["protective_high"], alone=" (no interval)"
            ),
        ]
        for _, r in summary.iterrows()
    ]
    header = ["source", "model", "agent", "schedule", "memory", "decisions", "mean regret", "best share"]
    lines += [md_table([*header, "verifications", "protective share"], rows), ""]
    if validation.empty:
        lines.append("Monte Carlo check: not run (--mc-decisions 0).")
    else:
        z = validation["z"].abs()
        lines.append(
            f"Monte Carlo check: {len(validation)} expected values of {validation[['run_id', 'session', 'game', 'round', 'seat']].drop_duplicates().shape[0]} "
            f"decisions re-estimated from {int(validation['n_sims'].iloc[0])} simulated games each; "
            f"max |z| = {z.max():.2f}, share with |z| > 3: {(z > 3).mean():.3f} (validation.csv)."
        )
    return "\n".join(lines) + "\n"


def write_report(
    tables: dict[str, pd.DataFrame], out: Path, variant: str, prior: tuple[float, float], level: float
) -> None:
    """Every table as CSV and ``report.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False, lineterminator="\n")
    (out / "report.md").write_text(report_text(tables, variant, prior, level), encoding="utf-8")
