"""What a run plays: scenarios (three decisions) or controlled-history pair sides (one decision)."""

from __future__ import annotations

from dataclasses import dataclass

from games.reliance.library import Library, Pair
from games.reliance.options import RelianceGame
from games.reliance.rules import Scenario
from trustsim.errors import ConfigError


@dataclass(frozen=True)
class Item:
    """One conversation."""

    id: str
    set: str
    scenario: Scenario
    pair: Pair | None = None
    side: str = ""

    @property
    def prefix(self) -> tuple[tuple[str, str], ...]:
        return tuple(self.pair.history(self.side)) if self.pair else ()


def _check_names(key: str, wanted: tuple[str, ...] | None, known: set[str]) -> None:
    if wanted is None:
        return
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ConfigError(
            key, f"unknown {unknown}; known: {sorted(known)[:30]}{' ...' if len(known) > 30 else ''}"
        )


def select_items(lib: Library, opts: RelianceGame) -> list[Item]:
    """Apply the set, filters and limit; errors name the offending key."""
    categories, processes = opts.names("categories"), opts.names("processes")
    blueprints, scenarios = opts.names("blueprints"), opts.names("scenarios")
    pool = {
        "main": lib.main,
        "support": [lib.scenario(s) for s in lib.support],
        "specialised": lib.specialised,
        "fixtures": lib.fixtures,
        "all": [*lib.main, *lib.specialised],
        "pairs": [],
    }[opts.set]
    everything = lib.all
    _check_names("game.categories", categories, {s.category for s in everything})
    _check_names("game.processes", processes, {s.process for s in everything})
    _check_names("game.blueprints", blueprints, {s.blueprint for s in everything})
    _check_names("game.scenarios", scenarios, {s.id for s in everything} | {p.id for p in lib.pairs})

    def keep(s: Scenario, item_id: str) -> bool:
        return (
            (categories is None or s.category in categories)
            and (processes is None or s.process in processes)
            and (blueprints is None or s.blueprint in blueprints)
            and (scenarios is None or item_id in scenarios or s.id in scenarios)
        )

    items: list[Item] = []
    if opts.set == "pairs":
        pairs = [p for p in lib.pairs if keep(lib.scenario(p.scenario), p.id)]
        if opts.limit is not None:
            pairs = pairs[: opts.limit]
        for p in pairs:
            scn = lib.scenario(p.scenario)
            items += [Item(f"{p.id}.a", "pairs", scn, p, "a"), Item(f"{p.id}.b", "pairs", scn, p, "b")]
    else:
        items = [Item(s.id, opts.set, s) for s in pool if keep(s, s.id)]
        if opts.limit is not None:
            items = items[: opts.limit]
    if not items:
        raise ConfigError("game", f"the filters select no scenario from set {opts.set!r}")
    return items
