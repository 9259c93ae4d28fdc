"""``python -m analysis extract-reference DIR``: unpack the shipped reference logs (Escape-room-v2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.reference_data import DATASET, ReferenceDataError, extract_reference


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``extract-reference`` subcommand."""
    p = subparsers.add_parser(
        "extract-reference",
        help=f"unpack the reference study's logs shipped with trustsim into DIR/{DATASET}",
        description=f"Unpack the reference study's raw logs ({DATASET}, MIT licence; LICENSE and README "
        f"inside) into DIR/{DATASET} and print that path (an existing copy of the same archive is reused). Use it with `python -m analysis trust` or "
        "`python -m trustsim.extract`; `python -m analysis trust --reference` does this by itself.",
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="folder to unpack into (created)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Unpack; exit 0 with the path on stdout, 1 with the reason on stderr."""
    try:
        target = extract_reference(args.dir)
    except ReferenceDataError as exc:
        print(f"extract-reference: {exc}", file=sys.stderr)
        return 1
    runs = sum(1 for _ in target.rglob("experiment_settings.json"))
    print(f"extract-reference: {runs} runs; licence and attribution: {target / 'LICENSE'}", file=sys.stderr)
    print(target)
    return 0
