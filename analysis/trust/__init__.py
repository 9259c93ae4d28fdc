"""Trust dynamics in the escape room: loading, measures, intervals, tables, figures and reports.

Entry point: ``python -m analysis trust DIR... --out REPORT_DIR`` (see ``docs/analysis.md``).
"""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``trust`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("trust", paths, **options)
