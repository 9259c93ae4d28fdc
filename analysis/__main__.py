"""Command line: ``python -m analysis <subcommand> ...``.

Each analysis subpackage contributes a ``cli`` module with ``add_parser(subparsers)``; the parser it adds
sets ``func`` (called with the parsed namespace, returning an exit code) via ``set_defaults``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

SUBCOMMAND_MODULES = (
    "analysis.trust.cli",
    "analysis.reliance.cli",
    "analysis.calibration.cli",
    "analysis.arena.cli",
    "analysis.conformance.cli",
    "analysis.trust_game.cli",
    "analysis.reference_cli",
)


def _load_cli_modules() -> list[object]:
    """Import every subcommand module that exists; a missing module is skipped, other errors raise."""
    modules = []
    for name in SUBCOMMAND_MODULES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            # Skip only when the cli module itself (or its not-yet-written subpackage) is absent;
            # a missing dependency *inside* an existing cli module is a real error.
            if missing != "analysis" and (name == missing or name.startswith(missing + ".")):
                continue
            raise
    return modules


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="python -m analysis",
        description="Analyse trustsim run directories: tables, figures and reports.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    subparsers = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    for module in _load_cli_modules():
        module.add_parser(subparsers)  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    return int(func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
