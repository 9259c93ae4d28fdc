"""Trust-game (Berg 1995 investment game) analysis: trust, trustworthiness, reciprocity, human references."""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``trust_game`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("trust_game", paths, **options)
