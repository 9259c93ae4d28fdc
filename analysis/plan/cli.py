"""``python -m analysis plan [DIR...] [--reference] --measure M --width W``: sessions per cell for a target
interval, with the cost (``--model``), written as ``plan.csv`` + ``plan.md`` and run by
``python -m trustsim -m +plan=plan.csv``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analysis.cli_options import open_unit_float, positive_float, positive_int

DEFAULT_OUT = Path("outputs/plan")


def _where(text: str) -> tuple[str, tuple[str, ...]]:
    key, sep, values = text.partition("=")
    if not sep or not key or not values:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE[,VALUE...] (got {text!r})")
    return key.strip(), tuple(v.strip() for v in values.split(","))


def _effect(text: str) -> float:
    value = float(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0")
    return value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``plan`` subcommand."""
    from analysis.plan.measures import MEASURES

    p = subparsers.add_parser(
        "plan",
        help="sessions per cell for a target interval half-width (and power), with the cost; plan.csv "
        "drives a multirun",
        description="Plan a study from pilot runs or the reference logs: per cell, the variance the "
        "interval depends on (between and within sessions, units per session), today's width, the sessions "
        "for half-width W (and, with --effect, for power), and with --model the cost through the preview. "
        "Run the plan with `python -m trustsim -m +plan=OUT/plan.csv`.",
    )
    p.add_argument(
        "dirs", nargs="*", metavar="DIR", help="pilot run or sweep directories (or reference logs)"
    )
    p.add_argument("--reference", action="store_true", help="also use the reference study's shipped logs")
    p.add_argument("--measure", required=True, choices=sorted(MEASURES), help="the measure to plan for")
    p.add_argument("--width", required=True, type=positive_float, metavar="W", help="target half-width")
    p.add_argument("--level", type=open_unit_float, default=0.95, help="interval level (default 0.95)")
    p.add_argument(
        "--assurance",
        type=open_unit_float,
        default=0.9,
        help="probability that the study's half-width is at most W (normal theory; default 0.9)",
    )
    p.add_argument("--effect", type=_effect, help="also plan 80%% power to detect this difference")
    p.add_argument("--power", type=open_unit_float, default=0.8, help="power for --effect (default 0.8)")
    p.add_argument(
        "--compare",
        metavar="KEY",
        help="plan the differences between cells that differ only in KEY (e.g. model): W and --effect "
        "apply to the difference, sessions are per cell",
    )
    p.add_argument(
        "--where",
        action="append",
        type=_where,
        default=[],
        metavar="KEY=V[,V...]",
        help="keep cells whose KEY is one of the values (repeatable), e.g. --where schedule=1strike",
    )
    p.add_argument(
        "--model",
        help="price every job with this model config (conf/model/X.yaml; the plan's jobs then run it), or "
        "`own`: each cell's own model",
    )
    p.add_argument(
        "--anchor",
        choices=("auto", "data", "published", "none"),
        default="auto",
        help="delta measures: the anchor (as `analysis trust --anchor`; default auto)",
    )
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"where plan.csv/plan.md go (default {DEFAULT_OUT})"
    )
    p.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--include-incomplete", action="store_true", help="keep running/failed runs")
    p.add_argument("--force", action="store_true", help="write into an --out folder holding foreign files")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Make the plan; exit 0, 2 on bad input (the message says why)."""
    from analysis.plan.build import PlanError, make_plan

    dirs = list(args.dirs)
    if args.reference:
        from analysis.reference_data import ReferenceDataError, reference_dir

        try:
            dirs.append(str(reference_dir()))
        except ReferenceDataError as exc:
            print(f"analysis plan: error: {exc}", file=sys.stderr)
            return 1
    if not dirs:
        print(
            "analysis plan: error: give pilot run or sweep directories (DIR...) or --reference",
            file=sys.stderr,
        )
        return 2
    try:
        result = make_plan(dirs, args)
    except PlanError as exc:
        print(f"analysis plan: error: {exc}", file=sys.stderr)
        return 2
    print(result.printed)
    return 0
