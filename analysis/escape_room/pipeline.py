"""The trust analysis computed: load, measures, deltas, curves, survival (``report.py`` writes it out)."""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pandas as pd

from analysis.cli_options import CommonOptions, with_reference
from analysis.escape_room.loader import TrustData, load_trust_data
from analysis.escape_room.measures import (
    AnchorCell,
    AnchorMode,
    CellResult,
    Delta,
    anchor_cells,
    compute_cells,
    compute_deltas,
    per_game_curves,
    verification_by_round,
)
from analysis.escape_room.seats import seat_outcomes, seat_verification
from analysis.escape_room.survival import survival_curves
from analysis.rundirs import DataWarning, RunDirError

log = logging.getLogger(__name__)


@dataclass
class TrustAnalysis:
    """Everything the report is made of."""

    data: TrustData
    cells: list[CellResult]
    anchors: dict[tuple[str, str, str], AnchorCell]
    deltas: list[Delta]
    curves: pd.DataFrame
    by_round: pd.DataFrame
    km: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    seats: pd.DataFrame = field(
        default_factory=pd.DataFrame
    )  # per-seat verification (analysis/escape_room/seats)
    seat_results: pd.DataFrame = field(default_factory=pd.DataFrame)  # per-seat survival, score
    anchor_mode: AnchorMode = "auto"
    inputs: list[str] = field(default_factory=list)  # the paths analysed, as given


@dataclass(frozen=True)
class TrustOptions(CommonOptions):
    """The options of ``python -m analysis trust`` (its flags) that the computation reads."""

    resamples: int = 5000
    anchor: AnchorMode = "auto"
    check_events: bool = False
    reference: bool = False


def compute(
    paths: Iterable[str | os.PathLike[str]],
    options: TrustOptions,
    *,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
) -> TrustAnalysis:
    """:func:`analyse` with the subcommand's options (``reference``: the shipped logs added to ``paths``)."""
    dirs = with_reference([str(p) for p in paths], options.reference)
    if not dirs:
        raise RunDirError("give run, sweep or reference-log directories (DIR...) or --reference")
    return analyse(
        dirs,
        anchor=options.anchor,
        include_incomplete=options.include_incomplete,
        check_events=options.check_events,
        n_resamples=options.resamples,
        seed=options.seed,
        level=options.level,
        progress=progress,
        say=say,
    )


def analyse(
    paths: Iterable[str | os.PathLike[str]],
    *,
    anchor: AnchorMode = "auto",
    include_incomplete: bool = False,
    check_events: bool = False,
    n_resamples: int = 5000,
    seed: int = 0,
    level: float = 0.95,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
) -> TrustAnalysis:
    """Load the data and compute every measure, delta, curve and survival table.

    ``say`` (optional) receives one progress line per phase.
    """
    say = say or (lambda _msg: None)
    inputs = [str(p) for p in paths]
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        try:
            data = load_trust_data(
                inputs, include_incomplete=include_incomplete, check_events=check_events, progress=progress
            )
        except RunDirError as exc:  # nothing usable left: the reasons are the damage warnings
            reasons = list(
                dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, DataWarning))
            )
            if reasons:
                raise RunDirError(f"{exc}; " + "; ".join(reasons)) from None
            raise
    msgs = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    for w in caught:
        if not issubclass(w.category, DataWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    timings["load"] = time.perf_counter() - t0
    say(f"loaded {data.n_games} games from {len(data.runs)} run(s) in {timings['load']:.1f} s")
    say(f"computing cell measures and deltas ({n_resamples} resamples per cell) ...")
    t = time.perf_counter()
    cells = compute_cells(data, n_resamples=n_resamples, seed=seed, level=level)
    anchors = anchor_cells(data, cells, mode=anchor, n_resamples=n_resamples, seed=seed, level=level)
    deltas = compute_deltas(cells, anchors, level=level)
    timings["measures"] = time.perf_counter() - t
    say(f"{len(cells)} cells in {timings['measures']:.1f} s; per-game curves and survival curves ...")
    t = time.perf_counter()
    curves = per_game_curves(data, n_resamples=n_resamples, seed=seed, level=level)
    by_round = verification_by_round(data)
    km = survival_curves(data, n_resamples=n_resamples, seed=seed, level=level)
    seats = seat_verification(data, n_resamples=n_resamples, seed=seed, level=level)
    timings["curves"] = time.perf_counter() - t
    for c in cells:
        if c.n_games_dcorrect == 0:
            msgs.append(f"cell {c.label} has no D-correct games: its primary measures are n/a")
        elif c.n_clusters < 3:
            msgs.append(f"cell {c.label} has {c.n_clusters} {c.cluster_unit} cluster(s) (< 3): no intervals")
    return TrustAnalysis(
        data, cells, anchors, deltas, curves, by_round, km, [*data.problems, *msgs], timings, seats,
        seat_outcomes(data), anchor, inputs,
    )  # fmt: skip
