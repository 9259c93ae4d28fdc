"""Calibration of stated probabilities against 0/1 outcomes (pure numpy).

Modules: ``scores`` (Brier, Murphy decomposition, log loss, ECE, reliability curve, bias),
``binning`` (equal-width / equal-mass bins), ``recalibrate`` (Platt, isotonic, cross-fitting),
``intervals`` (cluster-bootstrap intervals), ``load`` (predictions.csv), ``tables`` (measures per group),
``figures``, ``report`` and ``cli``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``calibration`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.calibration.report.CalibrationOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.calibration.report import CalibrationOptions, build_report, compute

    def report(dirs: list[str], opts: CalibrationOptions) -> Report:
        result = compute(dirs, opts)
        return Report(result.tables, lambda out, figures: build_report(result, out, figures))

    return analyse_with("calibration", paths, CalibrationOptions, report, **options)
