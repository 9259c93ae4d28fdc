"""The run directory's file names, table schemas, event envelope and event units.

No engine imports at import time: the event units are declared by each game (``GameSpec.unit``) and read from
the game registry (:mod:`trustsim.contract`) when first asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

MANIFEST = "manifest.json"
EVENTS = "events.jsonl"
LOCK = ".trustsim.lock"

#: Fields every event may carry, in this order: ``seq`` (0-based, contiguous) and ``type`` always; ``session``,
#: ``game`` and ``round`` where they apply. Games add their own fields after these.
EVENT_ENVELOPE = ("seq", "type", "session", "game", "round")


@dataclass(frozen=True)
class TableSchema:
    """One CSV table of a run directory: ``<name>.csv`` with these columns, in this order."""

    name: str
    columns: tuple[str, ...]
    doc: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        if len(set(self.columns)) != len(self.columns):
            dup = sorted({c for c in self.columns if self.columns.count(c) > 1})
            raise ValueError(f"table {self.name!r}: duplicate column(s) {dup}")

    @property
    def file(self) -> str:
        """The file name inside a run directory."""
        return f"{self.name}.csv"


PREDICTION_COLUMNS = [
    "run_id", "game_type", "cluster", "model", "agent", "memory", "schedule", "subject", "subject_kind",
    "game", "round", "p", "outcome", "p_exact", "source", "item",
]  # fmt: skip
#: The calibration contract every game writes (docs/run_directory.md, "predictions.csv").
PREDICTIONS = TableSchema(
    "predictions", tuple(PREDICTION_COLUMNS), "one row per stated probability: native confidence vs outcome"
)


@dataclass(frozen=True)
class EventUnit:
    """The unit of play a game brackets with a start and an end event (an escape-room game, an arena match).

    ``key`` names the event fields that identify one unit; ``table_keys`` says how a table row names the same
    unit, as a ``str.format`` template over the table's columns (``"*"``: every table not listed). The damage
    rule of the reader keeps the table rows of units whose events are intact.
    """

    start: str
    end: str
    key: tuple[str, ...]
    label: str
    event_key: str
    table_keys: dict[str, str] = field(default_factory=dict)

    def table_key(self, table: str) -> str | None:
        """The key template for rows of ``table`` (e.g. ``predictions``), None if the table has no units."""
        return self.table_keys.get(table, self.table_keys.get("*"))


def event_units() -> dict[str, EventUnit]:
    """Event units per game family (``manifest.game``): each registered game's ``GameSpec.unit.events``.

    It discovers the games (:func:`trustsim.contract.games`) on the first call, so it must not run while
    ``trustsim.rundir`` is being imported; later calls are cheap. A game without a unit is not listed.
    """
    from trustsim.contract import games

    return {name: spec.unit.events for name, spec in games().items() if spec.unit is not None}


def unit_starts() -> frozenset[str]:
    """Event types before which the recorder writes out everything it buffered (the previous unit of play is
    complete): every registered game's unit start, and ``session_start``."""
    return frozenset(unit.start for unit in event_units().values()) | {"session_start"}


class _EventUnits(Mapping[str, EventUnit]):
    """A read-only view of :func:`event_units`, resolved on each read (never at import)."""

    def __getitem__(self, game: str) -> EventUnit:
        return event_units()[game]

    def __iter__(self) -> Iterator[str]:
        return iter(event_units())

    def __len__(self) -> int:
        return len(event_units())

    def __repr__(self) -> str:
        return f"EVENT_UNITS({event_units()!r})"


#: Event units per game family (``manifest.game``), from each registered ``GameSpec.unit``: a read-only mapping
#: resolved when read (game discovery on the first read), never at import. A game without one gets the
#: file-level damage rule only.
EVENT_UNITS: Mapping[str, EventUnit] = _EventUnits()
