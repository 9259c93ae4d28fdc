"""``python -m analysis from-inspect LOG... --out DIR``: trustsim run directories from Inspect logs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``from-inspect`` subcommand."""
    p = subparsers.add_parser(
        "from-inspect",
        help="write the run directories of trustsim's Inspect tasks from Inspect logs (docs/inspect.md)",
        description="Each sample of a trustsim Inspect task is one trustsim job; its log keeps the job's run "
        "directory. Writes <out>/<log name>/<sample id>/ for every sample (events and tables as the job wrote "
        "them), so every analysis, the viewer and the card read them.",
    )
    p.add_argument(
        "logs", nargs="+", metavar="LOG", help="Inspect log files (.eval, .json) or folders of them"
    )
    p.add_argument("--out", type=Path, required=True, help="folder to write the run directories into")
    p.add_argument("--force", action="store_true", help="write into a folder that holds other files")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from analysis.inspect_logs.convert import write_run_dirs

    result = write_run_dirs(args.logs, args.out)
    for what, why in result.skipped:
        print(f"analysis from-inspect: skipped {what}: {why}", file=sys.stderr)
    print(
        f"wrote {len(result.run_dirs)} run director{'y' if len(result.run_dirs) == 1 else 'ies'} "
        f"from {result.logs} log{'s' if result.logs != 1 else ''} to {args.out}"
    )
    print(
        f"next: python -m analysis trust {args.out} --out report/   "
        "(or view, card, reliance, arena, ... each into a folder of its own, e.g. --out report/arena/)"
    )
    return 0
