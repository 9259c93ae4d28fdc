"""Reliance-benchmark metrics from run directories (never imports the game, the agents or the engine)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``reliance`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.reliance.report.RelianceOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.reliance.report import RelianceOptions, compute, report_tables, write_outputs

    def report(dirs: list[str], opts: RelianceOptions) -> Report:
        rep = compute(dirs, opts)
        return Report(
            report_tables(rep),
            lambda out, figures: write_outputs(rep, out, figures=figures, n_resamples=opts.resamples),
        )

    return analyse_with("reliance", paths, RelianceOptions, report, **options)
