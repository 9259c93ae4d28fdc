"""Calibration of stated probabilities against 0/1 outcomes (pure numpy).

Modules: ``scores`` (Brier, Murphy decomposition, log loss, ECE, reliability curve, bias),
``binning`` (equal-width / equal-mass bins), ``recalibrate`` (Platt, isotonic, cross-fitting),
``intervals`` (cluster-bootstrap intervals), ``load`` (predictions.csv), ``tables`` (measures per group),
``figures``, ``report`` and ``cli``.
"""


def analyse(paths: list[str] | str, **options: object) -> object:
    """Run the ``calibration`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags (see analysis/api.py)."""
    from analysis.api import analyse_with

    return analyse_with("calibration", paths, **options)
