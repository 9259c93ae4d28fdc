"""What a reliance job will ask before it runs: its decisions (the trust-card battery's plan)."""

from __future__ import annotations

from typing import Any


def count_decisions(cfg: dict[str, Any]) -> tuple[str, int, bool]:
    """(units, decisions, exact): one per stage of each selected scenario, one per pair question."""
    from games.reliance.items import select_items
    from games.reliance.library import default_library
    from games.reliance.options import options_from_config

    options = options_from_config(cfg)
    items = select_items(default_library(), options)
    runs = int(cfg["runs"])
    per_run = sum(1 if item.pair is not None else len(item.scenario.stages) for item in items)
    return f"runs={runs} x {len(items)} {options.set} items", runs * per_run, False
