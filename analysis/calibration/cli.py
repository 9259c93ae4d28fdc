"""``python -m analysis calibration DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys

from analysis.calibration.load import load_predictions
from analysis.calibration.report import build_report
from analysis.calibration.tables import Settings
from analysis.cli_options import add_common_options, positive_int
from analysis.rundirs import RunDirError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``calibration`` subcommand."""
    p = subparsers.add_parser(
        "calibration",
        help="calibration of stated confidence (predictions.csv) across games",
        description="Brier/Murphy, log loss, ECE, reliability curves, recalibration and breakdowns with "
        "cluster-bootstrap intervals for every predictions.csv under the given run or sweep directories.",
    )
    add_common_options(p, resamples=1000)
    p.add_argument(
        "--bins", type=positive_int, default=10, help="bins for ECE and reliability curves (default 10)"
    )
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (default 5)")
    p.add_argument(
        "--max-groups",
        type=int,
        default=100,
        help="skip a breakdown with more levels than this (default 100)",
    )
    p.add_argument("--source", action="append", help="keep only this confidence source (repeatable)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the calibration analysis; returns the exit code."""
    if args.folds < 2 or args.max_groups < 1:
        print("calibration: need --folds >= 2 and --max-groups >= 1", file=sys.stderr)
        return 2
    try:
        df, found = load_predictions(args.dirs, include_incomplete=args.include_incomplete)
    except RunDirError as exc:
        print(f"calibration: {exc}", file=sys.stderr)
        return 2
    if args.source:
        df = df[df["source"].isin(args.source)]
        if df.empty:
            print(f"calibration: no predictions with source in {args.source}", file=sys.stderr)
            return 2
    settings = Settings(args.bins, args.resamples, args.seed, args.level, args.folds, args.max_groups)
    written = build_report(df, args.out, settings, found.report())
    n_stated = int(df["p"].notna().sum())
    print(
        f"calibration: {n_stated} scored pairs ({len(df) - n_stated} missing) from {len(found.runs)} run(s)"
    )
    print(f"report: {written['report']}")
    return 0
