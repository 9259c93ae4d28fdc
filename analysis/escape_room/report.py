"""A trust analysis written out: its tables, figures and ``report.md`` (the tables and figures tied together in
prose)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from analysis.escape_room import figures, tables
from analysis.escape_room.figures import FigureResult
from analysis.escape_room.next_steps import gap_lines, weak_lines
from analysis.escape_room.pipeline import TrustAnalysis
from analysis.escape_room.seats import seat_matrix_md
from analysis.stats import MIN_CLUSTERS

_TABLE_TITLES = {
    "trust_formation": (
        "Trust formation",
        "Verifications per D-correct game. Δtrust = smooth − anchor (negative = trust formed).",
    ),
    "culprit_targeting": (
        "Culprit targeting",
        "Share of verifications aimed at the partner's puzzle (D-correct games). "
        "Δtarget = 1strike − anchor (positive = culprit targeted).",
    ),
    "schedule_sweep": (
        "Schedule sweep",
        "Volume and partner share per schedule over D-correct games (D-wrong games as a secondary "
        "reference); deltas against the anchor; * = 95% interval excludes 0.",
    ),
    "score_drivers": (
        "Score drivers",
        "Per cell, agents under test only; survival and coins per agent-game.",
    ),
    "score_matrix": (
        "Scenario × model score matrix",
        "Coins per agent-game (score 0 unless escaped and alive).",
    ),
}


def _weak_section(result: TrustAnalysis) -> list[str]:
    """The weak-model warning (the run summary's rule), or nothing."""
    weak = weak_lines(result.data.runs)
    if not weak:
        return []
    return [
        "## ⚠ Weak model",
        "",
        "Treat these results as a smoke test of the pipeline, not as evidence about the model:",
        "",
        *weak,
        "",
    ]


def render_report(result: TrustAnalysis, tables_md: dict[str, str], figs: list[FigureResult]) -> str:
    """The Markdown report text."""
    data = result.data
    sources = data.runs["source"].value_counts().to_dict() if not data.runs.empty else {}
    lines = [
        "# Trust dynamics report",
        "",
        f"Loaded {len(data.runs)} run(s) ({', '.join(f'{n} {s}' for s, n in sorted(sources.items()))}), "
        f"{data.n_games} games, {len(result.cells)} cells.",
        "",
        *_weak_section(result),
        "Method: measures count the agents under test only (never the scripted partner). Volume = "
        "verifications per game; partner share = verifications of the partner's puzzle ÷ all verifications, "
        "pooled over the cell; both over D-correct games (D-wrong as secondary). Intervals: cluster "
        "bootstrap, percentile 95%; cluster = game in memoryless cells, run in cells with memory; "
        "cells resampled independently; deltas subtract independently resampled cells.",
        "",
    ]
    gaps = gap_lines(
        result.cells, result.anchors, data.runs, anchor_mode=result.anchor_mode, inputs=result.inputs
    )
    if gaps:
        lines += ["## What this report cannot show yet, and how to get it", "", *gaps, ""]
    if data.excluded:
        lines += ["## Excluded runs", ""]
        lines += [f"- `{p}`: {why}" for p, why in data.excluded]
        lines.append("")
    if result.warnings:
        lines += ["## Data warnings", ""]
        lines += [f"- {w}" for w in result.warnings]
        lines.append("")
    lines += _sessions_hint(result)
    lines += ["## Anchors", ""]
    if result.anchors:
        for (model, agent, slot), a in sorted(result.anchors.items()):
            lines.append(
                f"- {model} ({agent}, partner slot {slot}): {a.source} — volume {a.volume.format(2)}, "
                f"partner share {a.partner_share.format(3)}"
            )
    else:
        lines.append("- none: no memoryless D-correct games (and no published anchor requested/known)")
    lines.append("")
    for name, (title, caption) in _TABLE_TITLES.items():
        lines += [f"## {title}", "", caption, "", tables_md.get(name, "_(not written)_"),
                  f"Files: `{name}.csv`, `{name}.md`.", ""]  # fmt: skip
    if "seat_verification" in tables_md and (result.seats["team"].astype(str) != "").any():
        lines += [
            "## Mixed teams: whom each player verifies",
            "",
            "Per mixed-team cell (cell key `team`; compositions are never pooled): the share of "
            "opportunities (a decision × another seat's puzzle) in which the verifier (a seat's model, or "
            "its agent when scripted) checked the target's puzzle; 95% cluster-bootstrap interval over "
            "sessions.",
            "",
            tables_md["seat_verification"],
            "",
            "Files: `seat_verification.csv` (every cell, with opportunities, verifications and per-game "
            "rates), `seat_outcomes.csv` (each player's survival, score and verifications per seat-game).",
            "",
        ]
    lines += ["## Figures", ""]
    for fname, caption in figs:
        if fname:
            lines += [f"![{caption}]({fname}.png)", "", f"{caption} (`{fname}.png`, `{fname}.pdf`)", ""]
        else:
            lines += [f"- figure skipped: {caption}", ""]
    lines += [
        "## Other files",
        "",
        "- `cells.csv`: every measure of every cell (estimate, low, high, clusters, note).",
        "- `per_game_curves.csv`: volume and partner share by game index per cell.",
        "- `verification_by_round.csv`: memoryless verifications per game by round and puzzle.",
        "- `survival_km.csv`: Kaplan–Meier curves per cell.",
        "- `runs.csv`: every run loaded, with its cell and configuration fingerprint.",
        "- `seat_verification.csv`: verification rate by cell × verifier player × target player.",
        "- `seat_outcomes.csv`: survival, score and verifications per seat-game by cell × player.",
        "",
    ]
    return "\n".join(lines)


def _sessions_hint(result: TrustAnalysis) -> list[str]:
    """Cells without intervals: the sessions that would give one, and the command that plans for a width."""
    few = [c for c in result.cells if c.n_games_dcorrect and c.n_clusters < MIN_CLUSTERS]
    if not few:
        return []
    lines = ["## How many sessions", ""]
    for c in few:
        sessions = c.n_runs
        lines.append(
            f"- {c.label}: {sessions} session{'s' if sessions != 1 else ''}, {c.n_clusters} {c.cluster_unit} "
            f"cluster(s); an interval needs {MIN_CLUSTERS}: run it with `runs={MIN_CLUSTERS}` (or more)"
        )
    runs = result.data.runs
    own = runs.loc[runs["source"] == "trustsim", "path"] if not runs.empty else []
    where = _pilot_dirs(sorted({str(p) for p in own}))
    pilot = (
        f"plan them from a pilot of >= 2 sessions per cell: `python -m analysis plan {where} --measure volume "
        "--width 0.25`, or with the reference study's logs as the pilot: "
        if where
        else "plan them with the reference study's logs as the pilot: "
    )
    lines += [
        "",
        f"To choose the sessions for the interval you want (half-width W), {pilot}"
        "`python -m analysis plan --reference --measure volume --width 0.25` (docs/analysis.md, *Planning a "
        "study*).",
        "",
    ]
    return lines


def _pilot_dirs(paths: list[str]) -> str:
    """The run directories of a pilot as command arguments: up to three as they are, else their common
    folder (absolute when the paths mix absolute and relative ones)."""
    if len(paths) <= 3:
        return " ".join(paths)
    try:
        return os.path.commonpath(paths)
    except ValueError:  # absolute and relative paths mixed
        return os.path.commonpath([os.path.abspath(p) for p in paths])


def report_tables(result: TrustAnalysis) -> dict[str, tuple[pd.DataFrame, pd.DataFrame | None]]:
    """Every table of the report: its CSV rows and, where the Markdown shows a formatted view, that view."""
    return {
        "trust_formation": tables.trust_formation(result.cells, result.anchors, result.deltas),
        "culprit_targeting": tables.culprit_targeting(result.cells, result.anchors, result.deltas),
        "score_drivers": tables.score_drivers(result.cells),
        "score_matrix": tables.score_matrix(result.cells),
        "schedule_sweep": tables.schedule_sweep(result.cells, result.deltas),
        "cells": (tables.cells_long(result.cells), None),
        "per_game_curves": (result.curves.fillna({"volume_note": "", "partner_share_note": ""}), None),
        "verification_by_round": (result.by_round, None),
        "survival_km": (result.km, None),
        "seat_verification": (result.seats, None),
        "seat_outcomes": (result.seat_results, None),
        "runs": (result.data.runs, None),
    }


def write_outputs(result: TrustAnalysis, out_dir: str | os.PathLike[str], *, figures_on: bool = True) -> Path:
    """Write tables, figures and ``report.md`` under ``out_dir``; returns the report path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    md = {
        name: tables.write_table(out, name, csv_df, md_df)
        for name, (csv_df, md_df) in report_tables(result).items()
    }
    md["seat_verification"] = seat_matrix_md(result.seats)  # the report's verifier x target matrices
    result.timings["tables"] = time.perf_counter() - t
    t = time.perf_counter()
    figs = (
        figures.all_figures(result.cells, result.deltas, result.curves, result.by_round, result.km, out)
        if figures_on
        else []
    )
    result.timings["figures"] = time.perf_counter() - t
    path = out / "report.md"
    path.write_text(render_report(result, md, figs), encoding="utf-8")
    return path
