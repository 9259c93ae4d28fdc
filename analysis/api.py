"""One Python shape for every analysis: ``analyse(paths, **options)`` → :class:`AnalysisResult`.

Each subpackage (``analysis.escape_room``, ``analysis.reliance``, ``analysis.calibration``, ``analysis.arena``,
``analysis.trust_game``, ``analysis.yardstick``, ``analysis.card``) exposes ``analyse(paths, **options)``: it
calls the analysis's computation, the function the command line calls too. The options are the subcommand's
flags (``include_incomplete=True`` for ``--include-incomplete``, ``resamples=1000`` for ``--resamples 1000``,
a list for a repeatable flag), the fields of the analysis's options dataclass. The result holds every table as
a pandas DataFrame (``result.tables["trust_formation"]``, the rows of ``trust_formation.csv``) and writes the
full report (tables, figures, ``report.md``) with ``result.write(out_dir)``::

    from analysis import escape_room
    result = escape_room.analyse(["outputs/runs"], anchor="data")
    result.tables["cells"].head()
    result.write("report/")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd


class AnalysisError(RuntimeError):
    """The analysis could not run (no usable run directory, a bad option, ...); the message says why."""


@dataclass
class Report:
    """What an analysis computed: its tables (the rows of each CSV, by file name without ``.csv``), and the
    renderer that writes them with the figures and ``report.md`` into a folder (``figures``: draw them)."""

    tables: dict[str, pd.DataFrame]
    render: Callable[[Path, bool], object]


@dataclass
class AnalysisResult:
    """Tables of one analysis, and how to write its full report."""

    command: str
    paths: list[str]
    options: Any
    report: Report

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table the report writes as CSV, by file name without ``.csv``."""
        return self.report.tables

    def write(self, out_dir: str | os.PathLike[str], *, figures: bool = True) -> Path:
        """Write tables, figures and ``report.md`` (as the command line does); returns ``out_dir``."""
        from analysis.outdir import OutDirError, owned_output

        out = Path(out_dir)
        try:
            with owned_output(out, self.command, force=False):
                self.report.render(out, figures)
        except OutDirError as exc:
            raise AnalysisError(f"analysis {self.command}: {exc}") from None
        return out


OptionsT = TypeVar("OptionsT")


def analyse_with(
    command: str,
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    options_type: Callable[..., OptionsT],
    compute: Callable[[list[str], OptionsT], Report],
    **options: Any,
) -> AnalysisResult:
    """Run ``compute`` (the analysis ``command``'s tables and renderer) on ``paths`` (run/sweep directories)
    with ``options`` (its flags, the fields of ``options_type``); a bad option or unusable input is an
    :class:`AnalysisError` naming it."""
    from analysis.reference_data import ReferenceDataError
    from analysis.rundirs import RunDirError

    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    path_list = [str(p) for p in paths]
    try:
        opts = options_type(**options)
    except TypeError as exc:
        raise AnalysisError(f"analysis {command}: {exc}") from None
    try:
        report = compute(path_list, opts)
    except (RunDirError, ReferenceDataError, ValueError) as exc:
        raise AnalysisError(f"analysis {command} failed: {exc}") from None
    return AnalysisResult(command, path_list, opts, report)
