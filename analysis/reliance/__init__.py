"""Reliance-benchmark metrics from run directories (never imports the game, the agents or the engine)."""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``reliance`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("reliance", paths, **options)
