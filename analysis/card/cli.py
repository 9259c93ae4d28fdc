"""``python -m analysis card DIR... --out OUT [--reference]``: one trust card per model (docs/trust_card.md).

Writes per subject ``card_<name>.html`` (self-contained; prints to one A4 page), ``card_<name>.png`` and
``card_<name>.pdf`` (headless Chromium; skipped with a warning when it is missing, or with
``--no-figures``), plus ``cards.csv`` (one row per subject, one column per figure with ``_low``, ``_high``,
``_n``, ``_status``) and ``compare.html`` (the subjects side by side).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from analysis.cli_options import add_common_options


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
    from analysis.card.collect import collect
    from analysis.card.render import card_filename, card_html, cards_table, compare_html

    reference = None
    if args.reference:
        from analysis.reference_data import reference_dir

        reference = reference_dir()
    if not args.dirs and reference is None:
        print("analysis card: error: give run or sweep directories (DIR...) or --reference", file=sys.stderr)
        return 2
    subjects = collect(args.dirs, reference=reference, resamples=args.resamples, seed=args.seed)
    for note in dict.fromkeys(n for s in subjects for n in s.notes):  # what was kept apart, once each
        print(f"analysis card: note: {note}", file=sys.stderr)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    files = []
    for s in subjects:
        path = out / card_filename(s)
        path.write_text(card_html(s, generated=generated), encoding="utf-8")
        files.append(path)
    cards_table(subjects).to_csv(out / "cards.csv", index=False)
    (out / "compare.html").write_text(compare_html(subjects, generated=generated), encoding="utf-8")
    print(f"analysis card: {len(subjects)} card(s): {', '.join(s.name for s in subjects)} -> {out}")
    if args.no_figures:
        return 0
    from analysis.card.browser import BrowserUnavailable, render

    try:
        pages = render(files)
    except BrowserUnavailable as exc:
        print(f"warning: PNG/PDF of the cards skipped: {exc}", file=sys.stderr)
        return 0
    over = {p.name: n for p, n in pages.items() if n != 1}
    if over:
        print(f"warning: card(s) not on one A4 page when printed: {over}", file=sys.stderr)
    return 0
