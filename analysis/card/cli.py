"""``python -m analysis card DIR... --out OUT [--reference]``: one trust card per model (docs/trust_card.md).

Writes per subject ``card_<name>.html`` (self-contained; prints to one A4 page), ``card_<name>.png`` and
``card_<name>.pdf`` (headless Chromium; skipped with a warning when it is missing, or with
``--no-figures``), plus ``cards.csv`` (one row per subject, one column per figure with ``_low``, ``_high``,
``_n``, ``_status``) and ``compare.html`` (the subjects side by side).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.cli_options import add_common_options, options_of


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``card`` subcommand."""
    p = subparsers.add_parser(
        "card",
        help="trust cards: one page per model from the trust-card battery (or the reference logs)",
        description="One page per model (self-contained HTML that prints to one A4 page, plus a PNG): "
        "trust formation, breakage, recovery, targeting, protective share, escape-room regret, reliance, "
        "arena, trust game, calibration across all games and provenance; cards.csv and compare.html.",
    )
    add_common_options(p, resamples=2000, dirs_help="run or sweep directories (e.g. a battery's sweep)",
                       level=False, dirs_optional=True)  # fmt: skip
    p.add_argument(
        "--reference",
        action="store_true",
        help="also make partial cards (escape room only) for the reference study's six models from the "
        "shipped logs",
    )
    p.add_argument("--no-figures", action="store_true", help="skip the PNG and PDF (no browser needed)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from analysis.card.report import CardOptions, compute, write_cards

    options = options_of(CardOptions, args)
    if not args.dirs and not options.reference:
        print("analysis card: error: give run or sweep directories (DIR...) or --reference", file=sys.stderr)
        return 2
    cards = compute(args.dirs, options)
    for note in dict.fromkeys(n for s in cards.subjects for n in s.notes):  # what was kept apart, once each
        print(f"analysis card: note: {note}", file=sys.stderr)
    out: Path = args.out
    warnings = write_cards(cards, out, figures=not args.no_figures)
    print(
        f"analysis card: {len(cards.subjects)} card(s): {', '.join(s.name for s in cards.subjects)} -> {out}"
    )
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
