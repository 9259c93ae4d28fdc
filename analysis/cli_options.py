"""Options every ``python -m analysis`` subcommand shares, validated by argparse itself (exit 2, clear message)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1 (got {value})")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (got {value})")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0 (got {value})")
    return value


def open_unit_float(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1) (got {value})")
    return value


def add_common_options(
    parser: argparse.ArgumentParser,
    *,
    resamples: int,
    dirs_help: str = "run or sweep directories",
    level: bool = True,
    dirs_optional: bool = False,
) -> None:
    """DIR..., --out, --resamples, --seed, [--level], --include-incomplete (DIR... may be empty when
    ``dirs_optional``: the subcommand then has another input, e.g. ``--reference``)."""
    parser.add_argument("dirs", nargs="*" if dirs_optional else "+", metavar="DIR", help=dirs_help)
    parser.add_argument(
        "--out", required=True, type=Path, metavar="REPORT_DIR", help="where tables, figures and report.md go"
    )
    parser.add_argument(
        "--resamples", type=positive_int, default=resamples, help=f"bootstrap resamples (default {resamples})"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    if level:
        parser.add_argument(
            "--level", type=open_unit_float, default=0.95, help="interval level (default 0.95)"
        )
    parser.add_argument("--include-incomplete", action="store_true", help="keep running/failed runs")
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into an --out folder that holds files no analysis wrote or another subcommand's report "
        "(files this subcommand wrote there before are always removed first)",
    )


@dataclass(frozen=True)
class CommonOptions:
    """The options every analysis computes with (the flags of :func:`add_common_options` but the folders)."""

    resamples: int = 2000
    seed: int = 0
    level: float = 0.95
    include_incomplete: bool = False


T = TypeVar("T", bound="DataclassInstance")


def options_of(options_type: type[T], args: argparse.Namespace) -> T:
    """The options dataclass ``options_type`` filled from the parsed flags of the same names."""
    return options_type(
        **{f.name: getattr(args, f.name) for f in fields(options_type) if hasattr(args, f.name)}
    )


def with_reference(dirs: list[str], reference: bool) -> list[str]:
    """``dirs``, and the unpacked reference logs last when ``reference`` (a ReferenceDataError if they cannot
    be unpacked)."""
    if not reference:
        return list(dirs)
    from analysis.reference_data import reference_dir

    return [*dirs, str(reference_dir())]


def cli_dirs(dirs: list[str], reference: bool, say: Callable[[str], None]) -> list[str] | int:
    """The folders a CLI analyses (``dirs``, the reference logs last with ``--reference``), or the exit code
    after saying why there are none: 1 when the reference logs cannot be unpacked, 2 when nothing was given."""
    from analysis.reference_data import ReferenceDataError

    try:
        found = with_reference(dirs, reference)
    except ReferenceDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if reference:
        say(f"reference logs: {found[-1]}")
    if not found:
        print("error: give run, sweep or reference-log directories (DIR...) or --reference", file=sys.stderr)
        return 2
    return found
