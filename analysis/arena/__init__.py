"""Arena (iterated prisoner's dilemma) analysis: payoffs, cooperation, retaliation/forgiveness, figures."""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``arena`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("arena", paths, **options)
