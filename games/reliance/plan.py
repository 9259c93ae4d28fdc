"""What a reliance job will ask before it runs: its decisions (the trust-card battery's plan) and its unit of
play (a scenario: the run directory's event unit, status's done/planned)."""

from __future__ import annotations

from typing import Any

from trustsim.contract import PlayUnit, plan_int
from trustsim.rundir.schema import EventUnit


def count_decisions(valid: Any) -> tuple[str, int, bool]:
    """(units, decisions, exact) of a validated config: one per stage of each selected scenario, one per pair
    question."""
    from games.reliance.items import select_items
    from games.reliance.library import default_library

    options = valid.options
    items = select_items(default_library(), options)
    runs = valid.root.runs
    per_run = sum(1 if item.pair is not None else len(item.scenario.stages) for item in items)
    return f"runs={runs} x {len(items)} {options.set} items", runs * per_run, False


def scenarios_per_run(config: dict[str, Any], library: dict[str, Any]) -> int | None:
    """Scenarios one run plays: the ``items`` of its ``library`` event (None until it is written)."""
    return plan_int(library, "items")


UNIT = PlayUnit(
    EventUnit(
        "scenario_start", "scenario_end", ("session", "item"), "scenario", "s{session}/{item}",
        {"*": "s{session}/{item}", "predictions": "{cluster}/{item}"},
    ),
    counted="scenarios",
    per_run=scenarios_per_run,
    reads="library",
)  # fmt: skip
"""A scenario (or pair question), bracketed by ``scenario_start``/``scenario_end``; the manifest counts
``scenarios``; the plan comes from the ``library`` event."""
