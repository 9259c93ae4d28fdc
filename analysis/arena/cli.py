"""``python -m analysis arena DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from analysis.arena.figures import match_grid, tournament_payoffs
from analysis.arena.measures import per_match
from analysis.arena.tables import (
    MIN_MATCHES,
    measure_table,
    payoff_matrix,
    tournament_table,
    varying_cells,
)
from analysis.cli_options import add_common_options, positive_int
from analysis.outputs import write_table
from analysis.rundirs import RunDirError, discover_runs, read_tables
from analysis.text import md_table, row_interval


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``arena`` subcommand."""
    p = subparsers.add_parser(
        "arena",
        help="iterated prisoner's dilemma: payoffs, cooperation, retaliation, tournament table, grid figure",
        description="Tables and figures for arena run directories (moves.csv).",
    )
    add_common_options(p, resamples=1000, level=False)
    p.add_argument(
        "--grid-matches", type=positive_int, default=60, help="matches shown in the grid figure (default 60)"
    )
    p.add_argument(
        "--min-matches",
        type=positive_int,
        default=MIN_MATCHES,
        help=f"rank only entries with at least this many matches; fewer are listed as underpowered "
        f"(default {MIN_MATCHES})",
    )
    p.set_defaults(func=run)
    return p


HEADER = (
    "rank [95%]", "player", "model", "matches", "rounds/match", "payoff/round", "cooperation", "mutual C",
    "retaliation", "forgiveness", "first D", "defected",
)  # fmt: skip


def _rank(row: pd.Series) -> str:
    if pd.isna(row["rank"]):
        return "—"
    if pd.isna(row["rank_low"]):
        return str(row["rank"])
    return f"{row['rank']} [{row['rank_low']}–{row['rank_high']}]"


def run(args: argparse.Namespace) -> int:
    """Run the arena analysis; returns the exit code."""
    try:
        found = discover_runs(args.dirs, include_incomplete=args.include_incomplete, game="arena")
        if not found.runs:
            where = ", ".join(map(str, args.dirs))
            raise RunDirError(
                f"no arena run directories in {where} ({found.report() or 'no manifest.json found'})"
            )
        moves = read_tables(found.runs, "moves.csv", cell_keys=False)
        if moves.empty:
            raise RunDirError("none of the arena runs has a non-empty moves.csv")
        pm = per_match(moves)
    except (RunDirError, ValueError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    table = tournament_table(pm, args.resamples, args.seed, args.min_matches)
    write_table(out, "tournament", table)
    cells = varying_cells(pm)
    pairs = measure_table(pm, [*cells, "player", "model", "opponent"], args.resamples, args.seed)
    write_table(out, "pairs", pairs)
    matrix = payoff_matrix(pm)
    write_table(out, "payoff_matrix", matrix, matrix.reset_index(), index=True)
    write_table(out, "per_match", pm.drop(columns=["one"], errors="ignore"))
    grid, shown = match_grid(moves, out / "match_grid.png", args.grid_matches)
    tournament_payoffs(table, out / "tournament_payoffs.png")
    lines = [
        "# Arena report",
        "",
        f"{len(found.runs)} run(s), {pm['cluster'].nunique()} matches, {int(pm['rounds'].sum()) // 2} rounds. "
        f"Intervals: 95% percentile cluster bootstrap over matches ({args.resamples} resamples, seed {args.seed}).",
        "Retaliation = P(D next | own C, opponent D); forgiveness = P(C next | own D after an opponent D, "
        "opponent back to C). First defection: mean round among matches with a defection.",
        f"Ranks by payoff per round among entries with at least {args.min_matches} matches (`--min-matches`), "
        "with the 95% interval of the rank over resamples; entries with fewer matches are listed as "
        "underpowered and not ranked.",
        "",
        "## Tournament table",
        "",
    ]
    rows = []
    for _, r in table.iterrows():
        row = [str(r[c]) for c in cells] + [
            _rank(r),
            str(r["player"]),
            str(r["model"]),
            str(r["matches"]),
            f"{r['rounds_per_match']:g}",
        ]
        row += [row_interval(r, m, 2) for m in ("payoff_per_round", "cooperation", "mutual_cooperation")]
        row += [row_interval(r, m, 2) for m in ("retaliation", "forgiveness")]
        row += [row_interval(r, "first_defection", 1), row_interval(r, "defected_share", 2)]
        rows.append(row)
    lines.append(md_table([*cells, *HEADER], rows))
    notes = [f"- {r['player']} ({r['model']}): {r['note']}" for _, r in table.iterrows() if r["note"]]
    if notes:
        lines += ["", "Notes:", "", *notes]
    if table["rounds_per_match"].nunique() > 1:
        lines += [
            "",
            "Match lengths differ between entries "
            f"({table['rounds_per_match'].min():g}–{table['rounds_per_match'].max():g} rounds per match): "
            "payoffs per round from different horizons are not directly comparable.",
        ]
    grid_runs = "; ".join(f"{run}: {n} of {total}" for run, n, total in shown)
    lines += [
        "",
        f"![match grid]({grid.name})",
        "",
        f"Match grid: one panel per run, matches shown (`--grid-matches` {args.grid_matches} in all) {grid_runs}; "
        "green CC, orange CD, blue DC, red DD.",
        "",
        "![tournament payoffs](tournament_payoffs.png)",
        "",
        "Files: tournament, pairs, payoff_matrix and per_match as `.csv` and `.md`; match_grid and "
        "tournament_payoffs as `.png` and `.pdf`.",
    ]
    if found.excluded:
        lines += ["", "## Excluded runs", "", "```", found.report(), "```"]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    under = int((~table["ranked"]).sum())
    print(
        f"arena: {pm['cluster'].nunique()} matches from {len(found.runs)} run(s); "
        + (f"{under} underpowered entr{'ies' if under != 1 else 'y'} not ranked; " if under else "")
        + f"report: {out / 'report.md'}"
    )
    return 0
