"""Queries over request stores: summaries, pruning and merging, for a store file or a shard directory.

A store is a SQLite file (``llm.store_path``) or a directory of shards (``llm.store_dir``: one file per
job, see :class:`trustsim.llm.store.ShardedStore`). ``info`` reads read-only; ``prune`` deletes in one
transaction per file; ``merge`` copies responses into one store, de-duplicated by request key.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustsim.llm.store import (
    BASE_COLUMNS,
    COLUMNS,
    LOCK_SUFFIX,
    StoreDamaged,
    check_integrity,
    check_store_header,
    migrate,
    open_read_only,
    request_key,
    shard_files,
    torn_tail,
    writer_alive,
    writer_holder,
)
from trustsim.store_cli.pages import leaf_records

DAY_S = 86400.0
_GROUP_SQL = (
    "SELECT {key}, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost_usd) "
    "FROM responses GROUP BY 1 ORDER BY 1"
)


class StoreCommandError(Exception):
    """A store that cannot be read or changed; the message says why and what to do."""


@dataclass
class StoreInfo:
    """Size on disk (the database plus its WAL/journal files), and counts per model, per day (UTC) and per
    purpose; for a shard directory, summed over its shards (``shards``; ``writers``: shards a job is writing
    now, by their lock files)."""

    path: str
    bytes: int
    responses: int
    by_model: list[dict[str, Any]] = field(default_factory=list)
    by_date: list[dict[str, Any]] = field(default_factory=list)
    by_purpose: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float = 0.0
    shards: int = 0
    writers: list[str] = field(default_factory=list)


def size_on_disk(path: Path) -> int:
    """Bytes of the store file and its ``-wal``/``-shm``/``-journal`` companions."""
    parts = (path, *(Path(f"{path}{s}") for s in ("-wal", "-shm", "-journal")))
    return sum(p.stat().st_size for p in parts if p.is_file())


def store_files(path: str | Path) -> list[Path]:
    """The store files of ``path``: itself, or every shard of a directory."""
    path = Path(path)
    if path.is_dir():
        files = shard_files(path)
        if not files:
            raise StoreCommandError(f"no request store shard (*.sqlite) in {path}")
        return files
    if not path.is_file():
        raise StoreCommandError(f"no request store at {path} (set --path to the store, llm.store_path)")
    return [path]


def _connect(path: Path, *, write: bool) -> sqlite3.Connection:
    """A connection to a store file that passed its checks (header, ``PRAGMA quick_check``, the table)."""
    if not path.is_file():
        raise StoreCommandError(f"no request store at {path} (set --path to the store, llm.store_path)")
    try:
        check_store_header(path, grace_s=0.0)
        conn = (
            sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            if write
            else open_read_only(path, check=True)
        )
        try:
            check_integrity(conn, path, "quick")
            conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        except BaseException:
            conn.close()
            raise
    except StoreDamaged as exc:
        raise StoreCommandError(damage_message(exc)) from None
    except sqlite3.Error as exc:
        raise StoreCommandError(f"{path} is not a usable request store ({exc})") from None
    return conn


def damage_message(exc: StoreDamaged) -> str:
    """A damaged, emptied or foreign store file, and what to do (``recover`` for a damaged one)."""
    if "damaged" in exc.problem:
        return (
            f"{exc}; copy its readable answers into a new store with: "
            f"python -m trustsim.store_cli --path {exc.path} recover"
        )
    return str(exc)


def _groups(conns: list[sqlite3.Connection], key: str, label: str) -> list[dict[str, Any]]:
    merged: dict[Any, dict[str, Any]] = {}
    for conn in conns:
        for k, n, p, c, u in conn.execute(_GROUP_SQL.format(key=key)):
            row = merged.setdefault(
                k, {label: k, "responses": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
            )
            row["responses"] += n
            row["prompt_tokens"] += p or 0
            row["completion_tokens"] += c or 0
            row["cost_usd"] += u or 0.0
    return [merged[k] for k in sorted(merged, key=lambda v: (v is None, str(v)))]


def live_writers(directory: Path) -> list[str]:
    """Shards of a directory that a job may be writing now: ``name (pid P on host H)``."""
    out = []
    for lock in sorted(directory.glob(f"*{LOCK_SUFFIX}")):
        holder = writer_holder(lock)
        if writer_alive(holder):
            out.append(
                f"{lock.name[: -len(LOCK_SUFFIX)]} (pid {holder.get('pid', '?')} on host "
                f"{holder.get('host', '?')})"
            )
    return out


def store_info(path: str | Path) -> StoreInfo:
    """Summarize the store (or shard directory) at ``path``, read-only."""
    path = Path(path)
    conns = [_connect(f, write=False) for f in store_files(path)]
    try:
        total = sum(int(c.execute("SELECT COUNT(*) FROM responses").fetchone()[0]) for c in conns)
        by_model = _groups(conns, "model", "model")
        return StoreInfo(
            str(path),
            sum(size_on_disk(f) for f in store_files(path)),
            total,
            by_model,
            _groups(conns, "date(created, 'unixepoch')", "date"),
            _groups(conns, "purpose", "purpose"),
            cost_usd=sum(r["cost_usd"] for r in by_model),
            shards=len(conns) if path.is_dir() else 0,
            writers=live_writers(path) if path.is_dir() else [],
        )
    finally:
        for conn in conns:
            conn.close()


def _where(models: list[str], older_than_days: float | None, now: float) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if models:
        clauses.append(f"model IN ({','.join('?' * len(models))})")
        params += models
    if older_than_days is not None:
        clauses.append("created < ?")
        params.append(now - older_than_days * DAY_S)
    return " AND ".join(clauses), params


def prune(
    path: str | Path,
    *,
    models: list[str] | None = None,
    older_than_days: float | None = None,
    dry_run: bool = False,
    vacuum: bool = False,
    now: float | None = None,
) -> dict[str, Any]:
    """Delete the responses of ``models`` and/or those stored more than ``older_than_days`` ago (both given:
    rows matching both), in a store file or every shard of a directory. Returns what matched per model and
    how many rows were deleted (0 on a dry run).

    Raises:
        StoreCommandError: No filter given, no store, a store that cannot be written (read-only), or a shard
            directory that a running job is writing (a shard has one writer: its job).
    """
    models = list(models or [])
    if not models and older_than_days is None:
        raise StoreCommandError(
            "prune needs --model and/or --older-than (nothing is deleted without a filter)"
        )
    if older_than_days is not None and older_than_days < 0:
        raise StoreCommandError(f"--older-than must be >= 0 days (got {older_than_days})")
    path = Path(path)
    files = store_files(path)
    if path.is_dir() and not dry_run and (busy := live_writers(path)):
        raise StoreCommandError(
            f"cannot prune {path}: a job is writing {', '.join(busy)}; prune when no job uses the store "
            f"directory (a lock file '*{LOCK_SUFFIX}' left by a job that is gone may be deleted)"
        )
    where, params = _where(models, older_than_days, time.time() if now is None else now)
    matched: dict[str, dict[str, Any]] = {}
    known: set[str] = set()
    deleted = 0
    for file in files:
        if not dry_run and not (os.access(file, os.W_OK) and os.access(file.parent, os.W_OK)):
            raise StoreCommandError(
                f"cannot prune {file}: the store (or its folder) is read-only here; "
                "prune a writable copy, or use --dry-run to see what would go"
            )
        found, names, n = _prune_file(file, where, params, dry_run=dry_run, vacuum=vacuum)
        known |= names
        deleted += n
        for m in found:
            row = matched.setdefault(m["model"], {"model": m["model"], "responses": 0, "cost_usd": 0.0})
            row["responses"] += m["responses"]
            row["cost_usd"] += m["cost_usd"]
    return {
        "path": str(path),
        "matched": [matched[m] for m in sorted(matched)],
        "deleted": deleted,
        "dry_run": dry_run,
        "unknown_models": [m for m in models if m not in known],
        "known_models": sorted(known),
    }


def _prune_file(
    path: Path, where: str, params: list[Any], *, dry_run: bool, vacuum: bool
) -> tuple[list[dict[str, Any]], set[str], int]:
    conn = _connect(path, write=not dry_run)
    try:
        matched = [
            {"model": m, "responses": n, "cost_usd": c or 0.0}
            for m, n, c in conn.execute(
                f"SELECT model, COUNT(*), SUM(cost_usd) FROM responses WHERE {where} GROUP BY 1 ORDER BY 1",
                params,
            )
        ]
        known = {row[0] for row in conn.execute("SELECT DISTINCT model FROM responses")}
        deleted = 0
        if not dry_run and matched:
            try:
                conn.execute("BEGIN IMMEDIATE")
                deleted = conn.execute(f"DELETE FROM responses WHERE {where}", params).rowcount
                conn.execute("COMMIT")
                if vacuum:
                    conn.execute("VACUUM")
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                hint = "; it is read-only here: prune a writable copy" if "readonly" in str(exc) else ""
                raise StoreCommandError(f"cannot prune {path}: {exc}{hint}") from exc
        return matched, known, deleted
    finally:
        conn.close()


# What a store written before a column existed holds in it: no job (NULL), no cached tokens (0).
_MISSING = {"cached_tokens": "0", "cache_write_tokens": "0"}


def merge(sources: list[str | Path], out: str | Path) -> dict[str, Any]:
    """Copy every response of ``sources`` (store files and shard directories) into the store ``out``,
    de-duplicated by request key: a key already in ``out`` (or in an earlier source; directories are read
    shard by shard in name order) is kept and the later copy skipped. A new ``out`` uses a rollback journal
    (safe on a network filesystem, and readable as a shard). Sources are only read.

    Returns per source: responses read, added, duplicates skipped, and ``conflicts`` (duplicates whose
    answer text differs from the kept one: the same request answered twice, e.g. without the store's
    replay).
    """
    out = Path(out)
    files: list[Path] = []
    for source in sources:
        for f in store_files(source):
            if f.resolve() != out.resolve() and f.resolve() not in {g.resolve() for g in files}:
                files.append(f)
    if not files:
        raise StoreCommandError("nothing to merge: the sources hold no store other than --out")
    new = not out.exists()
    if not new:  # a store of a known version, or a clear error: a damaged or foreign file is never changed
        _connect(out, write=False).close()
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(out.resolve().as_uri(), uri=True, timeout=30.0, isolation_level=None)
        if new:
            conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("BEGIN IMMEDIATE")
        migrate(conn)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreCommandError(f"cannot write the merged store {out}: {exc}") from exc
    report: list[dict[str, Any]] = []
    cols = ", ".join(COLUMNS)
    try:
        for f in files:
            src = _connect(f, write=False)  # a usable store, or a clear error
            present = {row[1] for row in src.execute("PRAGMA table_info(responses)")}
            src.close()
            conn.execute("ATTACH DATABASE ? AS src", (f"{f.resolve().as_uri()}?mode=ro",))
            try:  # a column an older source lacks: NULL (no job) or 0 (no cache tokens)
                select = ", ".join(c if c in present else _MISSING.get(c, "NULL") for c in COLUMNS)
                conn.execute("BEGIN IMMEDIATE")
                read = int(conn.execute("SELECT COUNT(*) FROM src.responses").fetchone()[0])
                conflicts = int(
                    conn.execute(
                        "SELECT COUNT(*) FROM src.responses s JOIN main.responses m ON m.key = s.key "
                        "WHERE m.text != s.text"
                    ).fetchone()[0]
                )
                added = conn.execute(
                    f"INSERT OR IGNORE INTO main.responses ({cols}) SELECT {select} FROM src.responses"
                ).rowcount
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                conn.execute("DETACH DATABASE src")
            report.append(
                {"source": str(f), "responses": read, "added": added, "duplicates": read - added,
                 "conflicts": conflicts}
            )  # fmt: skip
        total = int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error as exc:
        raise StoreCommandError(f"cannot merge into {out}: {exc}") from exc
    finally:
        conn.close()
    return {"out": str(out), "sources": report, "added": sum(r["added"] for r in report), "responses": total}


# -- recover -----------------------------------------------------------------------------------------------
_TYPES: tuple[tuple[type, ...], ...] = (
    (str,), (str,), (str, type(None)), (int,), (str,), (str,), (str,), (int,), (int,), (int, float), (int, float),
    (int, float), (str, type(None)), (int,), (int,),
)  # fmt: skip  # one per column of COLUMNS


def recovered_path(source: Path) -> Path:
    """Where ``recover`` writes by default: ``<stem>-recovered<suffix>`` beside the damaged file."""
    return source.with_name(f"{source.stem}-recovered{source.suffix}")


def recover(source: str | Path, out: str | Path | None = None) -> dict[str, Any]:
    """Copy every readable response of the store file ``source`` (damaged, typically) into a new store ``out``
    (default :func:`recovered_path`). The source is only read.

    Rows are read along every path SQLite offers, so a damaged page loses only the rows it held: a scan in
    rowid order resumed past each damaged stretch, the rowids the key and job indexes still list, then each
    remaining rowid on its own; then the table's leaf pages themselves (:mod:`trustsim.store_cli.pages`), which
    still hold their rows when a page above them (the table's root) is damaged. Only a row that proves itself
    a response is copied (:func:`valid_row`: its columns' types, no NUL in its text, a key that is the hash
    of its own request). Returns the counts: ``recovered`` (written to ``out``), ``unreadable`` (rows known
    to exist that could not be read), ``refused`` (rows read that are not a whole response: a torn answer)
    and the source's ``integrity`` (a torn tail, the first problem ``PRAGMA quick_check`` names, or ``ok``).
    """
    source, out = Path(source), Path(out) if out is not None else recovered_path(Path(source))
    if source.is_dir():
        raise StoreCommandError(
            f"{source} is a shard directory: recover one shard file at a time (--path FILE)"
        )
    if not source.is_file():
        raise StoreCommandError(f"no request store at {source} (set --path to the damaged store file)")
    if out.exists():
        raise StoreCommandError(f"{out} exists: recover writes a new store; choose another --out")
    try:
        check_store_header(source, grace_s=0.0)
    except StoreDamaged as exc:
        raise StoreCommandError(f"nothing to recover: {exc}") from None
    conn = _open_damaged(source)
    try:
        integrity = torn_tail(conn, source) or _integrity(conn)
        try:
            rows, failed = _readable_rows(conn)
        except StoreCommandError:  # the schema cannot be read: the leaf pages may still hold the rows
            rows, failed = {}, set()
    finally:
        conn.close()
    refused = {rowid for rowid, row in rows.items() if not valid_row(row)}
    rows = {rowid: row for rowid, row in rows.items() if rowid not in refused}
    keys = {row[0] for row in rows.values()}
    for rowid, values in leaf_records(source):  # rows no SQL path reached (a damaged page above them)
        row = _as_row(values)
        if row is not None and row[0] not in keys and rowid not in rows:
            rows[rowid], keys = row, keys | {row[0]}
            failed.discard(rowid)
            refused.discard(rowid)
    _write_store(out, rows)
    return {"source": str(source), "out": str(out), "recovered": len(rows), "unreadable": len(failed),
            "refused": len(refused), "integrity": integrity}  # fmt: skip


def valid_row(row: tuple[Any, ...]) -> bool:
    """Whether a row (the columns of :data:`COLUMNS`) is a whole response: every column of its type, an
    answer and request without NUL characters (a page cut short reads as zeros), a request that is a JSON
    object, and a key that is the hash of that request."""
    if len(row) != len(COLUMNS) or not all(isinstance(v, t) for v, t in zip(row, _TYPES, strict=True)):
        return False
    key, request, text = row[0], row[5], row[6]
    if "\x00" in text or "\x00" in request:
        return False
    try:
        if not isinstance(json.loads(request), dict):
            return False
    except ValueError:
        return False
    return request_key(request) == key


def _as_row(values: list[Any]) -> tuple[Any, ...] | None:
    """A leaf record as a row of :data:`COLUMNS` (a record written before a column was added lacks it: NULL
    job, 0 cache tokens), or None when it is not a whole response."""
    if not len(BASE_COLUMNS) <= len(values) <= len(COLUMNS):
        return None
    missing = COLUMNS[len(values) :]
    row = (*values, *(None if c == "job" else 0 for c in missing))
    return row if valid_row(row) else None


def _open_damaged(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri()
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=30.0)
        try:
            conn.execute("SELECT name FROM sqlite_master").fetchall()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            last = exc
    raise StoreCommandError(f"nothing to recover: {path} cannot be read at all ({last})")


def _integrity(conn: sqlite3.Connection) -> str:
    try:
        first = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.Error as exc:
        return str(exc)
    return str(first)


def _columns(conn: sqlite3.Connection) -> str:
    try:
        have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    except sqlite3.Error as exc:
        raise StoreCommandError(f"nothing to recover: the store's schema cannot be read ({exc})") from None
    if "key" not in have:
        raise StoreCommandError("nothing to recover: the file holds no responses table")
    return ", ".join(c if c in have else _MISSING.get(c, "NULL") for c in COLUMNS)


def _readable_rows(conn: sqlite3.Connection) -> tuple[dict[int, tuple[Any, ...]], set[int]]:
    """Every readable row by rowid, and the rowids of rows known to exist that could not be read."""
    select = f"SELECT rowid, {_columns(conn)} FROM responses"
    rows: dict[int, tuple[Any, ...]] = {}
    failed: set[int] = set()

    def keep(row: tuple[Any, ...]) -> None:
        if all(isinstance(v, t) for v, t in zip(row[1:], _TYPES, strict=True)):
            rows[row[0]] = row[1:]
        else:
            failed.add(row[0])

    known = _index_rowids(conn)
    top = max([*known, _max_rowid(conn)], default=0)
    last = 0
    while True:  # a scan in rowid order, resumed past each damaged stretch
        try:
            for row in conn.execute(f"{select} WHERE rowid > ? ORDER BY rowid", (last,)):
                last = row[0]
                keep(row)
            break
        except sqlite3.DatabaseError:
            last += 1
            if last > top:
                break
    top = max(top, max(rows, default=0))
    for rowid in sorted(set(range(1, top + 1)) | known):  # the rest, one by one
        if rowid in rows or rowid in failed:
            continue
        try:
            row = conn.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            failed.add(rowid)
            continue
        if row is not None:
            keep(row)
        elif rowid in known:
            failed.add(rowid)  # an index lists it, the table lost it
    return rows, failed


def _index_rowids(conn: sqlite3.Connection) -> set[int]:
    """Rowids the store's indexes list (read up to any damage)."""
    found: set[int] = set()
    for index in ("sqlite_autoindex_responses_1", "responses_job"):
        try:
            for (rowid,) in conn.execute(f"SELECT rowid FROM responses INDEXED BY {index}"):
                if isinstance(rowid, int) and 0 < rowid < 2**40:
                    found.add(rowid)
        except sqlite3.Error:
            continue
    return found


def _max_rowid(conn: sqlite3.Connection) -> int:
    try:
        value = conn.execute("SELECT MAX(rowid) FROM responses").fetchone()[0]
    except sqlite3.Error:
        return 0
    return value if isinstance(value, int) and value < 2**40 else 0


def _write_store(out: Path, rows: dict[int, tuple[Any, ...]]) -> None:
    """A new store (rollback journal, like a merge's) holding ``rows``, in their original order."""
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(out), isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("BEGIN IMMEDIATE")
            migrate(conn)
            placeholders = ", ".join("?" * len(COLUMNS))
            conn.executemany(
                f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                [rows[k] for k in sorted(rows)],
            )
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreCommandError(f"cannot write the recovered store {out}: {exc}") from None
