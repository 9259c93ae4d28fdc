"""Arena (iterated prisoner's dilemma) analysis: payoffs, cooperation, retaliation/forgiveness, figures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``arena`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.arena.report.ArenaOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.arena.report import ArenaOptions, compute, write_report

    def report(dirs: list[str], opts: ArenaOptions) -> Report:
        result = compute(dirs, opts)
        return Report(result.tables, lambda out, _: write_report(result, out))

    return analyse_with("arena", paths, ArenaOptions, report, **options)
