"""Trust dynamics in the escape room: loading, measures, intervals, tables, figures and reports.

Entry point: ``python -m analysis trust DIR... --out REPORT_DIR`` (the subcommand keeps the word ``trust``; see
``docs/analysis.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``trust`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.escape_room.pipeline.TrustOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.escape_room.pipeline import TrustOptions, compute
    from analysis.escape_room.report import report_tables, write_outputs

    def report(dirs: list[str], opts: TrustOptions) -> Report:
        result = compute(dirs, opts)
        return Report(
            {name: csv for name, (csv, _) in report_tables(result).items()},
            lambda out, figures: write_outputs(result, out, figures_on=figures),
        )

    return analyse_with("trust", paths, TrustOptions, report, **options)
