"""What a reliance job will ask before it runs: its decisions (the trust-card battery's plan) and its unit of
play (a scenario: the run directory's event unit, status's done/planned)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trustsim.contract import PlayUnit
from trustsim.rundir.schema import EventUnit

if TYPE_CHECKING:
    from trustsim.config import Validated


def selected_items(valid: Validated) -> list[Any]:
    """The items (scenarios and pair questions) one run of a validated config plays, from the library."""
    from games.reliance.items import select_items
    from games.reliance.library import default_library

    return select_items(default_library(), valid.options)


def count_decisions(valid: Validated) -> tuple[str, int, bool]:
    """(units, decisions, exact) of a validated config: one per stage of each selected scenario, one per pair
    question."""
    options = valid.options
    items = selected_items(valid)
    runs = valid.root.runs
    per_run = sum(1 if item.pair is not None else len(item.scenario.stages) for item in items)
    return f"runs={runs} x {len(items)} {options.set} items", runs * per_run, False


UNIT = PlayUnit(
    EventUnit(
        "scenario_start", "scenario_end", ("session", "item"), "scenario", "s{session}/{item}",
        {"*": "s{session}/{item}", "predictions": "{cluster}/{item}"},
    ),
    counted="scenarios",
    per_run=lambda valid: len(selected_items(valid)),
)  # fmt: skip
"""A scenario (or pair question), bracketed by ``scenario_start``/``scenario_end``; the manifest counts
``scenarios``; each run plays every selected item."""
