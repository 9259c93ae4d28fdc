"""The trust cards computed (one :class:`~analysis.card.collect.Subject` per model) and written out."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from analysis.card.collect import Subject, collect


@dataclass(frozen=True)
class CardOptions:
    """The options of ``python -m analysis card`` (its flags) that the computation reads."""

    resamples: int = 2000
    seed: int = 0
    reference: bool = False


@dataclass
class Cards:
    """One subject per card, in order."""

    subjects: list[Subject]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """``cards``: one row per subject, one column per figure with ``_low``, ``_high``, ``_n``, ``_status``."""
        from analysis.card.render import cards_table

        return {"cards": cards_table(self.subjects)}


def compute(paths: Iterable[str | os.PathLike[str]], options: CardOptions) -> Cards:
    """Every subject's figures from the runs under ``paths`` (and the shipped reference logs with
    ``options.reference``)."""
    from analysis.rundirs import RunDirError

    reference = None
    if options.reference:
        from analysis.reference_data import reference_dir

        reference = reference_dir()
    paths = list(paths)
    if not paths and reference is None:
        raise RunDirError("give run or sweep directories (DIR...) or --reference")
    return Cards(collect(paths, reference=reference, resamples=options.resamples, seed=options.seed))


def write_cards(cards: Cards, out: Path, figures: bool = True) -> list[str]:
    """Write each card's HTML, ``cards.csv``, ``compare.html`` and, with ``figures``, each card's PNG and PDF
    (headless Chromium); returns the warnings (no browser, a card not on one page)."""
    from analysis.card.render import card_filename, card_html, compare_html

    subjects = cards.subjects
    out.mkdir(parents=True, exist_ok=True)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    files = []
    for s in subjects:
        path = out / card_filename(s)
        path.write_text(card_html(s, generated=generated), encoding="utf-8")
        files.append(path)
    cards.tables["cards"].to_csv(out / "cards.csv", index=False)
    (out / "compare.html").write_text(compare_html(subjects, generated=generated), encoding="utf-8")
    if not figures:
        return []
    from analysis.card.browser import BrowserUnavailable, render

    try:
        pages = render(files)
    except BrowserUnavailable as exc:
        return [f"PNG/PDF of the cards skipped: {exc}"]
    over = {p.name: n for p, n in pages.items() if n != 1}
    return [f"card(s) not on one A4 page when printed: {over}"] if over else []
