"""Command line: ``python -m analysis <subcommand> ...``.

Each analysis subpackage contributes a ``cli`` module with ``add_parser(subparsers)``; the parser it adds
sets ``func`` (called with the parsed namespace, returning an exit code) via ``set_defaults``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

from analysis.outdir import OutDirError, owned_output
from analysis.progress import working
from analysis.rundirs import RunDirError, print_data_warnings

WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
"""A failed write of an output file: one line naming it, exit 3 (not an internal error)."""

SUBCOMMAND_MODULES = (
    "analysis.escape_room.cli",
    "analysis.reliance.cli",
    "analysis.calibration.cli",
    "analysis.arena.cli",
    "analysis.conformance.cli",
    "analysis.trust_game.cli",
    "analysis.reference_cli",
    "analysis.view.cli",
    "analysis.card.cli",
    "analysis.yardstick.cli",
    "analysis.plan.cli",
    "analysis.inspect_logs.cli",
)


def _load_cli_modules() -> list[ModuleType]:
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
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand; returns the exit code.

    Shared behaviour of every subcommand: damaged inputs are reported as ``warning: ...`` lines (once each);
    a :class:`RunDirError` (nothing usable left) or an unusable ``--out`` folder is one ``error:`` line and
    exit 2; ``--out`` is prepared by :func:`analysis.outdir.owned_output` (files the subcommand wrote there
    before are removed; foreign files need ``--force``). An unexpected exception is one line and exit 1
    (``-v`` shows the traceback). A command running longer than a few seconds prints a progress line now and
    then (:mod:`analysis.progress`). A write that fails (a full disk, a read-only folder) is one line naming
    the file, exit 3.
    """
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
    name = f"analysis {args.command}"
    # no progress lines for --quiet, nor while a site is served until stopped
    chatty = not getattr(args, "quiet", False) and getattr(args, "serve", None) is None
    with print_data_warnings():
        try:
            out = getattr(args, "out", None)
            if out is None:
                with working(name, enabled=chatty):
                    return int(func(args) or 0)
            with owned_output(out, str(args.command), force=bool(getattr(args, "force", False))) as removed:
                if removed:
                    print(
                        f"{name}: removed {len(removed)} file(s) its previous run wrote in {out}",
                        file=sys.stderr,
                    )
                with working(name, enabled=chatty):
                    return int(func(args) or 0)
        except (RunDirError, OutDirError) as exc:
            print(f"{name}: error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS and not args.verbose:
                # shutil names the source first and the destination second
                where = exc.filename2 or exc.filename or getattr(args, "out", None) or "an output file"
                print(
                    f"{name}: error: cannot write {where}: {exc.strerror or exc}; free space on that disk or "
                    "make it writable (or choose another --out), then re-run the same command",
                    file=sys.stderr,
                )
                return 3
            if args.verbose:
                raise
            reason = " ".join(str(exc).split())[:500]
            print(
                f"{name}: internal error: {type(exc).__name__}: {reason} (re-run with -v for the traceback)",
                file=sys.stderr,
            )
            return 1


if __name__ == "__main__":
    sys.exit(main())
