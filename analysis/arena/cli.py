"""``python -m analysis arena DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys

from analysis.arena.report import ArenaOptions, compute, write_report
from analysis.arena.tables import MIN_MATCHES
from analysis.cli_options import add_common_options, options_of, positive_int
from analysis.rundirs import RunDirError


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


def run(args: argparse.Namespace) -> int:
    """Run the arena analysis; returns the exit code."""
    try:
        result = compute(args.dirs, options_of(ArenaOptions, args))
    except (RunDirError, ValueError) as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    report = write_report(result, args.out)
    pm, table = result.per_match, result.tournament
    under = int((~table["ranked"]).sum())
    print(
        f"arena: {pm['cluster'].nunique()} matches from {len(result.found.runs)} run(s); "
        + (f"{under} underpowered entr{'ies' if under != 1 else 'y'} not ranked; " if under else "")
        + f"report: {report}"
    )
    return 0
