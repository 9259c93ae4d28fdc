"""The arena analysis: each match's measures, the tournament table, pairs, payoff matrix, figures, report."""

from __future__ import annotations

from dataclasses import dataclass
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
from analysis.cli_options import CommonOptions
from analysis.outputs import write_table
from analysis.rundirs import Discovery, RunDirError, discover_runs, read_tables
from analysis.text import md_table, row_interval

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


@dataclass(frozen=True)
class ArenaOptions(CommonOptions):
    """The options of ``python -m analysis arena`` (its flags) that the computation and report read."""

    resamples: int = 1000
    grid_matches: int = 60
    min_matches: int = MIN_MATCHES


@dataclass
class Arena:
    """The arena analysis: the moves read, each match's measures and the tables built from them."""

    options: ArenaOptions
    found: Discovery
    moves: pd.DataFrame
    per_match: pd.DataFrame
    tournament: pd.DataFrame
    cells: list[str]
    pairs: pd.DataFrame
    matrix: pd.DataFrame

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The CSV tables: ``tournament``, ``pairs``, ``payoff_matrix``, ``per_match``."""
        return {
            "tournament": self.tournament,
            "pairs": self.pairs,
            "payoff_matrix": self.matrix.reset_index(),
            "per_match": self.per_match.drop(columns=["one"], errors="ignore"),
        }


def compute(paths: list[str], options: ArenaOptions) -> Arena:
    """Read the moves of every arena run under ``paths`` and compute every table."""
    found = discover_runs(paths, include_incomplete=options.include_incomplete, game="arena")
    if not found.runs:
        where = ", ".join(map(str, paths))
        raise RunDirError(
            f"no arena run directories in {where} ({found.report() or 'no manifest.json found'})"
        )
    moves = read_tables(found.runs, "moves.csv", cell_keys=False)
    if moves.empty:
        raise RunDirError("none of the arena runs has a non-empty moves.csv")
    pm = per_match(moves)
    table = tournament_table(pm, options.resamples, options.seed, options.min_matches)
    cells = varying_cells(pm)
    pairs = measure_table(pm, [*cells, "player", "model", "opponent"], options.resamples, options.seed)
    return Arena(options, found, moves, pm, table, cells, pairs, payoff_matrix(pm))


def write_report(result: Arena, out: Path) -> Path:
    """Write the tables, the figures (always: the report describes them) and ``report.md`` under ``out``;
    returns the report's path."""
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in result.tables.items():
        if name == "payoff_matrix":
            write_table(out, name, result.matrix, frame, index=True)
        else:
            write_table(out, name, frame)
    found, pm, table, cells, args = (
        result.found,
        result.per_match,
        result.tournament,
        result.cells,
        result.options,
    )
    grid, shown = match_grid(result.moves, out / "match_grid.png", args.grid_matches)
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
    return out / "report.md"
