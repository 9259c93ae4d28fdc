"""``python -m analysis yardstick DIR... --out OUT [--reference]``: the normative yardstick's tables and report."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from analysis.cli_options import (
    add_common_options,
    cli_dirs,
    non_negative_int,
    options_of,
    positive_float,
)
from analysis.yardstick.model import MODEL_VERSION, VARIANTS
from analysis.yardstick.score import LABEL, SYMMETRIC


def add_parser(subparsers: Any) -> None:
    """Register the ``yardstick`` subcommand."""
    p = subparsers.add_parser(
        "yardstick",
        help="escape-room decisions against a normative model: expected value per action, regret, protective "
        "verifications (a model-based yardstick, not the exact optimum of the game)",
        description=(
            "Score every escape-room decision of the seats under test against the yardstick's reference model "
            f"({LABEL}, model {MODEL_VERSION}): each partner's reliability from the exact posterior of the "
            "session's public evidence, teammates playing a stated policy (the variant), the game's elimination "
            "rule for every action, the coin a verification costs. Writes decisions.csv, summary.csv, "
            "validation.csv (Monte Carlo check) and report.md. See docs/yardstick.md."
        ),
    )
    add_common_options(
        p, resamples=2000, dirs_help="run, sweep or reference-log directory", dirs_optional=True
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="also score the reference study's logs shipped with trustsim (escape-room-v2, MIT licence)",
    )
    p.add_argument(
        "--variant",
        choices=(*VARIANTS, SYMMETRIC),
        default="team",
        help="the teammates' policy: team = the reference (bayes) rule on their exact beliefs, self_reliant = "
        "they pass, symmetric = the policy that is a best response when every seat plays it, where the "
        "iteration reaches one (default team; see docs/yardstick.md)",
    )
    p.add_argument("--prior-alpha", type=positive_float, default=1.0, help="Beta prior alpha (default 1)")
    p.add_argument("--prior-beta", type=positive_float, default=1.0, help="Beta prior beta (default 1)")
    p.add_argument(
        "--mc-decisions",
        type=non_negative_int,
        default=200,
        help="decisions whose expected values are re-estimated by Monte Carlo in validation.csv (default 200; 0: none)",
    )
    p.add_argument(
        "--mc-sims",
        type=non_negative_int,
        default=20_000,
        help="simulated games per action in that check (default 20000)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute the yardstick; returns the exit code."""
    from analysis.yardstick.pipeline import YardstickOptions, compute
    from analysis.yardstick.report import write_report

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    options = options_of(YardstickOptions, args)
    dirs = cli_dirs(args.dirs, options.reference, say)
    if isinstance(dirs, int):
        return dirs
    result = compute(dirs, replace(options, reference=False), say=say)
    for path, why in result.loaded.excluded:
        say(f"excluded {path}: {why}")
    out = Path(args.out)
    write_report(result.tables, out, options.variant, options.prior, options.level)
    tables = result.tables
    say(
        f"scored {len(tables['decisions'])} decisions in {len(tables['summary'])} cell(s); wrote {out} "
        f"in {time.perf_counter() - t0:.1f} s ({LABEL}, model {MODEL_VERSION})"
    )
    return 0
