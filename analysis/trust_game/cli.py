"""``python -m analysis trust_game DIR... --out REPORT_DIR``: tables, figures and report.md."""

from __future__ import annotations

import argparse
import sys

from analysis.cli_options import add_common_options, options_of
from analysis.rundirs import RunDirError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``trust_game`` subcommand."""
    p = subparsers.add_parser(
        "trust_game",
        help="Berg trust game: sent fraction, return ratio, efficiency, reciprocity, dynamics vs human references",
        description="Tables, figures and report.md for trust-game run directories (exchanges.csv).",
    )
    add_common_options(p, resamples=2000)
    p.add_argument("--no-figures", action="store_true", help="skip figures")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the trust-game analysis; returns the exit code."""
    from analysis.trust_game.report import TrustGameOptions, compute, write_report

    try:
        result = compute(args.dirs, options_of(TrustGameOptions, args))
    except (RunDirError, ValueError) as exc:
        print(f"trust_game: {exc}", file=sys.stderr)
        return 2
    report = write_report(result, args.out, figures_on=not args.no_figures)
    pairs = result.exchanges["cluster"].nunique()
    print(f"trust_game: {pairs} pairs from {len(result.found.runs)} run(s); report: {report}")
    return 0
