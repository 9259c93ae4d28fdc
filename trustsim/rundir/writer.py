"""Writers of a run directory: the append-only event log, CSV tables, and atomic JSON files."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from trustsim.rundir.schema import EVENTS, TableSchema


def format_cell(value: Any) -> Any:
    """CSV cell value: booleans as true/false, floats in shortest round-trip form; None stays None (the csv
    module writes it as an empty cell); ints and strings pass through."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return repr(round(value, 10))
    if kind is int or kind is str or value is None:
        return value
    return str(value)


def _cells(row: Mapping[str, Any], columns: list[str]) -> list[Any]:
    out = []
    append = out.append
    for column in columns:
        value = row.get(column)
        kind = type(value)
        if kind is bool:
            append("true" if value else "false")
        elif kind is float:
            append(repr(round(value, 10)))
        elif kind is int or kind is str or value is None:
            append(value)
        else:
            append(str(value))
    return out


def json_default(obj: Any) -> Any:
    """``json.dumps`` fallback: sets/tuples as lists, numpy scalars as Python numbers, else ``str``."""
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    return str(obj)


class TableWriter:
    """Streams rows of one CSV table; the column order is fixed at creation."""

    def __init__(self, path: Path, columns: Iterable[str]) -> None:
        self.path = path
        self.columns = list(columns)
        self._fh: TextIO = path.open("w", encoding="utf-8", newline="")
        self._writer = csv.writer(self._fh, lineterminator="\n")
        self._writer.writerow(self.columns)
        self.rows = 0

    def write_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        cols = self.columns
        lines = [_cells(row, cols) for row in rows]
        self._writer.writerows(lines)
        self._fh.flush()
        self.rows += len(lines)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


def write_table(path: Path, columns: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> int:
    """Write a whole CSV table at once (same cell format as :class:`TableWriter`); returns the row count."""
    writer = TableWriter(path, columns)
    try:
        writer.write_rows(rows)
    finally:
        writer.close()
    return writer.rows


class RunRecorder:
    """Owns a run directory's ``events.jsonl`` and CSV tables.

    Events are appended one JSON object per line and flushed per event, so a crash loses at most the event
    being written; every event carries a contiguous ``seq``. Text that contains a secret from the environment
    is redacted before it reaches disk. Open it through :func:`trustsim.rundir.open_run_dir`, which holds the
    directory's lock first.
    """

    def __init__(self, run_dir: Path) -> None:
        from trustsim.secrets import secret_values

        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._events: TextIO = (self.run_dir / EVENTS).open("w", encoding="utf-8")
        self._tables: dict[str, TableWriter] = {}
        self._secrets = secret_values()
        self.seq = 0

    def event(self, type: str, **fields: Any) -> None:
        line = json.dumps(
            {"seq": self.seq, "type": type, **fields},
            separators=(",", ":"),
            ensure_ascii=False,
            default=json_default,
        )
        if self._secrets:
            from trustsim.secrets import redact_text

            line = redact_text(line, self._secrets)
        self._events.write(line + "\n")
        self._events.flush()
        self.seq += 1

    def table(self, name: str | TableSchema, columns: Iterable[str] | None = None) -> TableWriter:
        """The writer of table ``name`` (``<name>.csv``), created on first use with ``columns``.

        ``name`` may be a :class:`TableSchema`, which brings its own columns.
        """
        if isinstance(name, TableSchema):
            name, columns = name.name, name.columns
        if name not in self._tables:
            if columns is None:
                raise ValueError(f"table {name!r}: columns are required on first use")
            self._tables[name] = TableWriter(self.run_dir / f"{name}.csv", columns)
        return self._tables[name]

    def table_rows(self) -> dict[str, int]:
        return {name: t.rows for name, t in self._tables.items()}

    def close(self) -> None:
        for table in self._tables.values():
            table.close()
        if not self._events.closed:
            self._events.close()


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON via a temporary file and rename, so readers never see half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=json_default) + "\n", encoding="utf-8")
    os.replace(tmp, path)
