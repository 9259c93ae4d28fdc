"""Trust-game (Berg 1995 investment game) analysis: trust, trustworthiness, reciprocity, human references."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``trust_game`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (DataFrames) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.trust_game.report.TrustGameOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.trust_game.report import TrustGameOptions, compute, write_report

    def report(dirs: list[str], opts: TrustGameOptions) -> Report:
        result = compute(dirs, opts)
        return Report(result.tables, lambda out, figures: write_report(result, out, figures_on=figures))

    return analyse_with("trust_game", paths, TrustGameOptions, report, **options)
