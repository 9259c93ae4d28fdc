"""Writers of a run directory: the append-only event log, CSV tables, and atomic JSON files.

Crash semantics (``docs/run_directory.md``, *Crash semantics*): events and table rows are buffered in memory
and written out (``flush``: handed to the operating system, so they survive the process being killed, even by
``kill -9``) before every unit of play starts (escape-room game, arena match, trust-game session, reliance
scenario), at least once a second while events arrive, and when the recorder closes. A killed job therefore
loses at most the unit in progress; its last line may be cut, which every reader tolerates.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

from trustsim.host import current_host
from trustsim.rundir.schema import EVENTS, EventUnit, TableSchema
from trustsim.secrets import redact_text, secret_values

_monotonic = time.monotonic

FLUSH_EVERY_S = 1.0
"""Longest time buffered events wait before they are written out (while events keep arriving)."""


SESSION_START = "session_start"
"""An event type before which the recorder always writes out what it buffered (a session is a unit too)."""


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


def cell_text(value: Any) -> str:
    """The text of a CSV cell before quoting (:func:`format_cell`, with None as the empty string)."""
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return repr(round(value, 10))
    return str(value)


def csv_line(cells: Sequence[str]) -> str:
    """One row as the ``csv`` module writes it (minimal quoting), without its line end."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()[:-1]


def bool_text(value: bool) -> str:
    """``true``/``false``: the cell text of a boolean (for rows built as text)."""
    return "true" if value else "false"


def json_default(obj: Any) -> Any:
    """``json.dumps`` fallback: sets/tuples as lists, numpy scalars as Python numbers, else ``str``."""
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    return str(obj)


_EVENT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=json_default)
"""The one encoder of event lines (``json.dumps`` with options would build a new encoder per call)."""


class TableWriter:
    """Streams rows of one CSV table, written as the ``csv`` module writes them (minimal quoting, ``\\n`` line
    ends); the column order is fixed at creation.

    Rows are mappings (column → value; a missing column is an empty cell), :meth:`write_rows`, or tuples of
    values in column order, :meth:`write_tuples`. Values are written as :func:`cell_text` gives them. Lines are
    buffered until :meth:`flush` (the run recorder flushes before every unit of play) or :meth:`close`; a flush
    is one write call.
    """

    def __init__(self, path: Path, columns: Iterable[str]) -> None:
        self.path = path
        self.columns = list(columns)
        self._fh = _open_for_writing(path)
        self._commas = len(self.columns) - 1
        self._values = itemgetter(*self.columns) if len(self.columns) > 1 else None
        self._pending: list[str] = [csv_line(self.columns)]
        self.rows = 0

    def write_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        self.write_tuples(map(self._tuple, rows))

    def _tuple(self, row: Mapping[str, Any]) -> Sequence[Any]:
        if self._values is not None:
            try:
                return self._values(row)
            except KeyError:  # a missing column: an empty cell
                pass
        return [row.get(column) for column in self.columns]

    def write_tuples(self, rows: Iterable[Sequence[Any]]) -> None:
        lines = [self._line(row) for row in rows]
        if lines:
            self._pending.append("\n".join(lines))
            self.rows += len(lines)

    def _line(self, values: Sequence[Any]) -> str:
        """The row's cells joined by commas when none needs quoting (none holds a comma, a quote or a line
        break; a lone empty cell is quoted), else the ``csv`` module's line."""
        try:
            line = ",".join(values)
        except TypeError:  # not every value is text yet
            values = [cell_text(v) for v in values]
            line = ",".join(values)
        if (
            self._commas
            and line.count(",") == self._commas
            and '"' not in line
            and "\n" not in line
            and "\r" not in line
        ):
            return line
        return csv_line(values)

    def flush(self) -> None:
        """Write buffered lines out to the operating system (one write call; lines whose write failed are
        dropped, never written twice)."""
        if self._pending and not self._fh.closed:
            try:
                _write_all(self._fh, ("\n".join(self._pending) + "\n").encode("utf-8"))
            finally:
                self._pending.clear()

    def close(self) -> None:
        if not self._fh.closed:
            try:
                self.flush()
            finally:
                self._fh.close()


def _open_for_writing(path: Path) -> io.FileIO:
    """An unbuffered binary file (truncated): each flush hands its bytes to the operating system in one call."""
    return io.FileIO(path, "w")


def _write_all(fh: io.FileIO, data: bytes) -> None:
    """Write all of ``data`` (a raw write may take only part of it). A failed write (a full disk) raises
    ``OSError`` naming the file."""
    try:
        written = fh.write(data) or 0
        if written < len(data):
            view = memoryview(data)
            while written < len(data):
                written += fh.write(view[written:]) or 0
    except OSError as exc:
        if exc.filename is None:
            exc.filename = fh.name
        raise


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

    Events are appended one JSON object per line; every event carries a contiguous ``seq``. Events and table
    rows are buffered and written out before every unit of play starts (the start event of ``unit``, the
    game's :class:`~trustsim.rundir.schema.EventUnit`, and ``session_start``), at least every
    :data:`FLUSH_EVERY_S` seconds while events arrive, on :meth:`flush` and on :meth:`close`; a killed job
    loses at most the unit in progress. Text that contains a secret from the environment is redacted before
    it reaches disk; a job's host (:mod:`trustsim.host`) sees each event line as it is appended. Open it
    through :func:`trustsim.rundir.open_run_dir`, which holds the directory's lock
    first.
    """

    def __init__(self, run_dir: Path, unit: EventUnit | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._events = _open_for_writing(self.run_dir / EVENTS)
        self._pending: list[str] = []
        self._tables: dict[str, TableWriter] = {}
        self._secrets = secret_values()
        self._secret_breaks = any("\n" in v for v in self._secrets)  # see flush
        self._flushed_at = _monotonic()
        self._unit_starts = frozenset({SESSION_START, *([unit.start] if unit is not None else [])})
        host = current_host()  # a harness running this job (trustsim.host) may watch its events
        self._observer = host.on_event if host is not None else None
        self.seq = 0

    def event(self, type: str, **fields: Any) -> None:
        """Append the event ``{"seq": ..., "type": type, **fields}`` as one line of JSON."""
        if type in self._unit_starts:
            self.flush()  # the previous unit of play is complete: its events and rows reach the disk
        line = _EVENT_JSON.encode({"seq": self.seq, "type": type, **fields})
        self._pending.append(line)
        self.seq += 1
        if self._observer is not None:  # the line as it will reach disk (secrets redacted)
            self._observer(redact_text(line, self._secrets) if self._secrets else line)
        if _monotonic() - self._flushed_at >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Write every buffered event and table row out to the operating system (no fsync): one write call per
        file that has something new.

        Secrets are redacted from the events' text here, from the whole block at once: the same text as redacting
        each line, since a secret without a line break can only match within a line (the block's lines are
        joined by line breaks). Were a secret to hold a line break, each line is redacted on its own.
        """
        for table in self._tables.values():
            table.flush()
        if self._pending and not self._events.closed:
            pending = self._pending
            if self._secrets:
                if self._secret_breaks:
                    pending = [redact_text(line, self._secrets) for line in pending]
                else:
                    pending = [redact_text("\n".join(pending), self._secrets)]
            text = "\n".join(pending) + "\n"
            try:
                _write_all(self._events, text.encode("utf-8"))
            finally:  # a failed write (a full disk) is reported once: its events are not written again
                self._pending.clear()
        self._flushed_at = _monotonic()

    def table(self, name: str | TableSchema, columns: Iterable[str] | None = None) -> TableWriter:
        """The writer of table ``name`` (``<name>.csv``), created on first use with ``columns``.

        ``name`` may be a :class:`TableSchema`, which brings its own columns.
        """
        if isinstance(name, TableSchema):
            schema = name
            name, columns = schema.name, schema.columns
        if name not in self._tables:
            if columns is None:
                raise ValueError(f"table {name!r}: columns are required on first use")
            self._tables[name] = TableWriter(self.run_dir / f"{name}.csv", columns)
        return self._tables[name]

    def table_rows(self) -> dict[str, int]:
        return {name: t.rows for name, t in self._tables.items()}

    def close(self) -> None:
        """Write out what is buffered and close every file (all of them, even when a write fails)."""
        try:
            self.flush()
        finally:
            for table in self._tables.values():
                with contextlib.suppress(OSError):
                    table.close()  # (a failed flush above already reported the write error)
            if not self._events.closed:
                self._events.close()


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON via a temporary file and rename, so readers never see half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(
            json.dumps(data, indent=2, sort_keys=False, default=json_default) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()  # no half-written copy left behind
        if exc.filename is None:
            exc.filename = str(path)
        raise
    os.replace(tmp, path)
