"""The run directory's file names, table schemas, event envelope and event units.

Each game declares its event unit (``GameSpec.unit``); the job writes it into ``manifest.json`` (``unit``), and
the reader takes it from there: reading a run directory needs no game registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

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


PREDICTION_KEYS = ("run_id", "game_type", "cluster", "model", "agent")
"""The first columns of every ``predictions.csv``: whose prediction, in which game and cluster."""
PREDICTION_MEASURES = (
    "subject", "subject_kind", "game", "round", "p", "outcome", "p_exact", "source", "item",
)  # fmt: skip
"""The last columns of every ``predictions.csv``: what was predicted, the stated probability and the outcome."""


def prediction_schema(cell: Sequence[str] = ()) -> TableSchema:
    """The calibration contract every game writes (docs/run_directory.md, "predictions.csv"): the keys, then
    the game's own cell columns (what tells its experimental cells apart), then the measures."""
    return TableSchema(
        "predictions",
        (*PREDICTION_KEYS, *cell, *PREDICTION_MEASURES),
        "one row per stated probability: native confidence vs outcome",
    )


@dataclass(frozen=True)
class EventUnit:
    """The unit of play a game brackets with a start and an end event (an escape-room game, an arena match).

    ``key`` names the event fields that identify one unit; ``table_keys`` says how a table row names the same
    unit, as a ``str.format`` template over the table's columns (``"*"``: every table not listed). The damage
    rule of the reader keeps the table rows of units whose events are intact. A job records its game's unit in
    ``manifest.json`` (:meth:`to_dict`), so a reader needs no game to apply the rule (:meth:`from_manifest`).
    """

    start: str
    end: str
    key: tuple[str, ...]
    label: str
    event_key: str
    table_keys: dict[str, str] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(
            (self.start, self.end, self.key, self.label, self.event_key, tuple(self.table_keys.items()))
        )

    def table_key(self, table: str) -> str | None:
        """The key template for rows of ``table`` (e.g. ``predictions``), None if the table has no units."""
        return self.table_keys.get(table, self.table_keys.get("*"))

    def to_dict(self) -> dict[str, Any]:
        """The unit as ``manifest.json`` records it."""
        return {**asdict(self), "key": list(self.key)}

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> EventUnit | None:
        """The unit a manifest records (``unit``); None when it records none (a game without units, or a run
        directory written before manifests carried it) or the record is damaged: the reader then applies its
        file-level damage rule only."""
        data = manifest.get("unit")
        if not isinstance(data, Mapping):
            return None
        try:
            unit = cls(
                start=str(data["start"]),
                end=str(data["end"]),
                key=tuple(str(k) for k in data["key"]),
                label=str(data["label"]),
                event_key=str(data["event_key"]),
                table_keys={str(k): str(v) for k, v in dict(data.get("table_keys") or {}).items()},
            )
        except (KeyError, TypeError, ValueError):
            return None
        return unit if unit.start and unit.end and unit.key else None
