"""The trust card: one page per model from the trust-card battery (or the reference logs).

Entry point: ``python -m analysis card DIR... --out OUT`` (see ``docs/trust_card.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.api import AnalysisResult


def analyse(paths: list[str] | str, **options: Any) -> AnalysisResult:
    """Run the ``card`` analysis on run/sweep directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (``cards``) and ``.write(out_dir)``; options are the subcommand's flags
    (:class:`analysis.card.report.CardOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.card.report import CardOptions, compute, write_cards

    def report(dirs: list[str], opts: CardOptions) -> Report:
        cards = compute(dirs, opts)
        return Report(cards.tables, lambda out, figures: write_cards(cards, out, figures))

    return analyse_with("card", paths, CardOptions, report, **options)
