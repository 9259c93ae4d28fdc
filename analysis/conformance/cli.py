"""``python -m analysis conformance DIR... --out OUT``: replay the reference study's recorded games through
our rules and report, per game, whether every compared field agrees.

Design exception: ``analysis`` reads files and imports no game code, but a conformance replay needs *our*
rules, so this subcommand imports :mod:`games.escape_room.conformance` (pure code: rules + log parsing, no
Mesa, no model) lazily inside :func:`run`; every other subcommand stays free of ``games/``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from trustsim.rundir.reference_logs import find_reference_runs


def add_parser(subparsers: Any) -> None:
    """Register the ``conformance`` subcommand."""
    p = subparsers.add_parser(
        "conformance",
        help="replay the reference study's recorded games through our rules and compare",
        description=(
            "For every recorded game of the reference logs (Escape-room-v2 format: experiment_settings.json + "
            "game_*.json per run), rebuild the start state, feed the recorded decisions through trustsim's "
            "escape-room rules with the recorded draws, and compare round by round. Writes conformance.csv "
            "and conformance.md."
        ),
    )
    p.add_argument("dirs", nargs="*", metavar="DIR", help="reference-log directories (searched recursively)")
    p.add_argument("--out", required=True, type=Path, metavar="OUT", help="where conformance.csv/.md go")
    p.add_argument(
        "--reference", action="store_true", help="also replay the reference logs shipped with trustsim"
    )
    p.add_argument(
        "--own-verify",
        choices=("charge", "illegal"),
        default="charge",
        help="rule variant to replay with (game.own_verify; default charge, the reference rule)",
    )
    p.add_argument(
        "--capsule-names",
        choices=("lenient", "exact"),
        default="lenient",
        help="rule variant to replay with (game.capsule_names; default lenient, the reference rule)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into an --out folder that holds files no analysis wrote (files this subcommand wrote "
        "there before are always removed first)",
    )
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay, compare, write the outputs; returns the exit code (0 also when games differ: see the report)."""
    from analysis.conformance.report import write_outputs
    from games.escape_room.conformance import FIELDS, LOGGING_BUGS, replay_run  # design exception: docstring
    from games.escape_room.rules import RuleOptions

    dirs = list(args.dirs)
    if args.reference:
        from analysis.reference_data import ReferenceDataError, reference_dir

        try:
            dirs.append(reference_dir())
        except ReferenceDataError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if not dirs:
        print("error: give reference-log directories (DIR...) or --reference", file=sys.stderr)
        return 2
    runs: list[Path] = []
    for d in dirs:
        if not Path(d).is_dir():
            print(f"error: {d}: not a directory", file=sys.stderr)
            return 2
        runs.extend(find_reference_runs(d))
    runs = sorted(set(runs))
    if not runs:
        print(
            f"error: no reference run (experiment_settings.json + game_*.json) under {', '.join(map(str, dirs))}",
            file=sys.stderr,
        )
        return 2
    rules = RuleOptions(own_verify=args.own_verify, capsule_names=args.capsule_names)
    t0 = time.perf_counter()
    results = [r for folder in runs for r in replay_run(folder, rules)]
    summary = write_outputs(
        results, args.out, rules=rules, n_runs=len(runs), fields=FIELDS, logging_bugs=LOGGING_BUGS
    )
    if not args.quiet:
        print(f"{summary} ({time.perf_counter() - t0:.1f} s) -> {args.out}", file=sys.stderr)
    return 0
