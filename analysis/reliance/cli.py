"""``python -m analysis reliance DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analysis.rundirs import RunDirError


def add_parser(subparsers: Any) -> None:
    """Register the ``reliance`` subcommand."""
    p = subparsers.add_parser(
        "reliance",
        help="reliance benchmark: accuracy, all-stage success, regret, pairs, support, diagnostics",
        description="Analyse reliance run directories (main, pairs and support runs, any mix of systems).",
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="run or sweep directory")
    p.add_argument(
        "--out", required=True, metavar="REPORT_DIR", help="where tables, figures and report.md go"
    )
    p.add_argument(
        "--resamples", type=int, default=10_000, help="blueprint bootstrap resamples (default 10000)"
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--include-incomplete", action="store_true", help="keep running/failed runs")
    p.add_argument("--no-figures", action="store_true", help="skip figures")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the analysis; returns the exit code."""
    from analysis.reliance.load import load
    from analysis.reliance.report import analyse, write_outputs

    if args.resamples < 1:
        print("error: --resamples must be >= 1", file=sys.stderr)
        return 2
    if not 0 < args.level < 1:
        print("error: --level must be in (0, 1)", file=sys.stderr)
        return 2
    try:
        data = load(args.dirs, include_incomplete=args.include_incomplete)
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rep = analyse(data, n_resamples=args.resamples, seed=args.seed, level=args.level)
    written = write_outputs(rep, Path(args.out), figures=not args.no_figures, n_resamples=args.resamples)
    print(f"wrote {len(written)} files to {args.out}")
    if not rep.main.empty:
        print(
            rep.main[["system", "macro_accuracy", "all_stage_success", "normalised_regret"]].to_string(
                index=False
            )
        )
    return 0
