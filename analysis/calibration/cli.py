"""``python -m analysis calibration DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys

from analysis.calibration.report import CalibrationOptions, build_report, compute
from analysis.cli_options import add_common_options, options_of, positive_int
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
    try:
        result = compute(args.dirs, options_of(CalibrationOptions, args))
    except (RunDirError, ValueError) as exc:
        print(f"calibration: {exc}", file=sys.stderr)
        return 2
    written = build_report(result, args.out)
    print(
        f"calibration: {result.stated} scored pairs ({result.rows - result.stated} missing) from {result.runs} run(s)"
    )
    print(f"report: {written['report']}")
    return 0
