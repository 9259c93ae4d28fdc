"""``python -m analysis trust DIR... --out REPORT_DIR``."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from typing import Any

from analysis.cli_options import add_common_options, cli_dirs, options_of
from analysis.rundirs import RunDirError


def add_parser(subparsers: Any) -> None:
    """Register the ``trust`` subcommand."""
    p = subparsers.add_parser(
        "trust",
        help="escape-room trust dynamics: tables, figures, report",
        description=(
            "Analyse escape-room runs: run directories, sweep directories and/or directories of the "
            "reference study's logs (detected by experiment_settings.json + game_*.json)."
        ),
    )
    add_common_options(
        p, resamples=5000, dirs_help="run, sweep or reference-log directory", dirs_optional=True
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="also analyse the reference study's logs shipped with trustsim (escape-room-v2, MIT licence; "
        "unpacked once into the user cache)",
    )
    p.add_argument(
        "--anchor",
        choices=("auto", "data", "published", "none"),
        default="auto",
        help="anchor source for deltas: data (memoryless D-correct games of the same model), published "
        "(the study's point values), auto (data when present, else published; default), none",
    )
    p.add_argument("--check-events", action="store_true", help="parse every line of every events.jsonl")
    p.add_argument("--no-figures", action="store_true", help="skip figures")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the trust analysis; returns the exit code."""
    from analysis.escape_room.pipeline import TrustOptions, compute
    from analysis.escape_room.report import write_outputs

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    options = options_of(TrustOptions, args)
    dirs = cli_dirs(args.dirs, options.reference, say)
    if isinstance(dirs, int):
        return dirs
    say(f"loading {len(dirs)} path(s) ...")
    try:
        result = compute(dirs, replace(options, reference=False), progress=not args.quiet, say=say)
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path, why in result.data.excluded:
        say(f"excluded {path}: {why}")
    for w in result.warnings:  # shown even with --quiet: damaged or dropped input must not pass unseen
        print(f"warning: {w}", file=sys.stderr, flush=True)
    say(f"{result.data.n_games} games in {len(result.cells)} cells; writing tables and figures ...")
    report = write_outputs(result, args.out, figures_on=not args.no_figures)
    say(f"wrote {report} in {time.perf_counter() - t0:.1f} s")
    return 0
