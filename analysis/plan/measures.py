"""The measures a study can be planned for, and where their cells come from."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from analysis.plan.cells import PlanCell


@dataclass(frozen=True)
class MeasureSpec:
    """A plannable measure: its family's module (with ``load_cells(paths, measure, **options)``) and label."""

    name: str
    module: str
    label: str


MEASURES: dict[str, MeasureSpec] = {
    m.name: m
    for m in (
        MeasureSpec("volume", "analysis.plan.escape", "verifications per D-correct game (escape room)"),
        MeasureSpec(
            "partner_share", "analysis.plan.escape", "share of verifications at the partner's puzzle"
        ),
        MeasureSpec("delta_trust", "analysis.plan.escape", "Δtrust: volume − the memoryless anchor's"),
        MeasureSpec("delta_target", "analysis.plan.escape", "Δtarget: partner share − the anchor's"),
        MeasureSpec(
            "accuracy", "analysis.plan.family_cells", "reliance: blueprint-macro share of optimal decisions"
        ),
        MeasureSpec("regret", "analysis.plan.family_cells", "reliance: normalised regret (pooled)"),
        MeasureSpec("cooperation", "analysis.plan.family_cells", "arena: the player's cooperation rate"),
        MeasureSpec("sent_share", "analysis.plan.family_cells", "trust game: sent fraction s/E"),
        MeasureSpec(
            "returned_share", "analysis.plan.family_cells", "trust game: returned share Σr / Σk·s (s > 0)"
        ),
        MeasureSpec(
            "brier", "analysis.plan.family_cells", "calibration: Brier score of stated probabilities"
        ),
    )
}


def load_cells(
    measure: str, paths: Iterable[str | os.PathLike[str]], **options: object
) -> tuple[list[PlanCell], list[str]]:
    """The cells of ``measure`` in ``paths`` and the data's warnings."""
    spec = MEASURES[measure]
    module = importlib.import_module(spec.module)
    return module.load_cells(list(paths), measure, **options)
