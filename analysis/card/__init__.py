"""The trust card: one page per model from the trust-card battery (or the reference logs).

Entry point: ``python -m analysis card DIR... --out OUT`` (see ``docs/trust_card.md``).
"""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``card`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (``cards``) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("card", paths, **options)
