"""One Python shape for every analysis: ``analyse(paths, **options)`` → :class:`AnalysisResult`.

Each subpackage (``analysis.trust``, ``analysis.reliance``, ``analysis.calibration``, ``analysis.arena``,
``analysis.trust_game``) exposes ``analyse(paths, **options)``, a thin wrapper over its command-line code:
the options are the subcommand's flags (``include_incomplete=True`` for ``--include-incomplete``,
``resamples=1000`` for ``--resamples 1000``, a list for a repeatable flag). The result holds every table as
a pandas DataFrame (``result.tables["trust_formation"]``) and writes the full report (tables, figures,
``report.md``) with ``result.write(out_dir)``::

    from analysis import trust
    result = trust.analyse(["outputs/runs"], anchor="data")
    result.tables["cells"].head()
    result.write("report/")
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


class AnalysisError(RuntimeError):
    """The analysis could not run (no usable run directory, a bad option, ...); the message says why."""


def _flags(options: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, list | tuple):
            for item in value:
                argv += [flag, str(item)]
        else:
            argv += [flag, str(value)]
    return argv


def _has_flag(command: str, flag: str) -> bool:
    from analysis.__main__ import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        sub = action.choices.get(command) if hasattr(action, "choices") else None
        if sub is not None:
            return any(flag in a.option_strings for a in sub._actions)
    raise AnalysisError(f"unknown analysis {command!r}")


def _run(command: str, paths: list[str], out: Path, options: dict[str, Any]) -> None:
    from analysis.__main__ import main

    argv = [command, *paths, "--out", str(out), *_flags(options)]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        raise AnalysisError(
            f"analysis {command} failed (exit {code}): {lines[-1] if lines else 'no message'}"
        )


def _read(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:  # a table with no rows and no header
        return pd.DataFrame()


@dataclass
class AnalysisResult:
    """Tables of one analysis, and how to write its full report."""

    command: str
    paths: list[str]
    options: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def write(self, out_dir: str | os.PathLike[str], *, figures: bool = True) -> Path:
        """Write tables, figures and ``report.md`` (as the command line does); returns ``out_dir``."""
        options = dict(self.options)
        if not figures and _has_flag(self.command, "--no-figures"):
            options["no_figures"] = True
        _run(self.command, self.paths, Path(out_dir), options)
        return Path(out_dir)


def analyse_with(command: str, paths: Iterable[str | os.PathLike[str]], **options: Any) -> AnalysisResult:
    """Run the subcommand ``command`` on ``paths`` (run/sweep directories) and load its tables."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    path_list = [str(p) for p in paths]
    quick = dict(options)
    if _has_flag(command, "--no-figures"):
        quick["no_figures"] = True
    with tempfile.TemporaryDirectory(prefix=f"trustsim-{command}-") as tmp:
        out = Path(tmp) / "out"
        _run(command, path_list, out, quick)
        tables = {str(p.relative_to(out).with_suffix("")): _read(p) for p in sorted(out.rglob("*.csv"))}
    return AnalysisResult(command, path_list, dict(options), tables)
