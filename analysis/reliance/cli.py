"""``python -m analysis reliance DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.cli_options import add_common_options, options_of
from analysis.rundirs import RunDirError
from analysis.text import interval_text


def add_parser(subparsers: Any) -> None:
    """Register the ``reliance`` subcommand."""
    p = subparsers.add_parser(
        "reliance",
        help="reliance benchmark: accuracy, all-stage success, regret, pairs, support, diagnostics",
        description="Analyse reliance run directories (main, pairs and support runs, any mix of systems).",
    )
    add_common_options(p, resamples=10_000)
    p.add_argument("--no-figures", action="store_true", help="skip figures")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the analysis; returns the exit code."""
    from analysis.reliance.report import RelianceOptions, compute, write_outputs

    try:
        rep = compute(args.dirs, options_of(RelianceOptions, args))
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    written = write_outputs(rep, Path(args.out), figures=not args.no_figures, n_resamples=args.resamples)
    print(f"wrote {len(written)} files to {args.out}")
    if not rep.main.empty:
        print(summary_text(rep.main))
    return 0


def summary_text(main: pd.DataFrame) -> str:
    """The main metrics per system with blueprints (the resampling unit), intervals and notes."""
    out = main[["system", "blueprints", "scenarios"]].copy()
    for name in ("macro_accuracy", "all_stage_success", "normalised_regret"):
        out[name] = [
            interval_text(e, lo, hi)
            for e, lo, hi in zip(main[name], main[f"{name}_low"], main[f"{name}_high"], strict=True)
        ]
    out["note"] = main["note"]
    return out.to_string(index=False)
