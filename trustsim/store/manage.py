"""Queries over the request store's ``responses`` table: summaries and pruning (no schema change)."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustsim.llm.store import open_read_only

DAY_S = 86400.0
_GROUP_SQL = (
    "SELECT {key}, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost_usd) "
    "FROM responses GROUP BY 1 ORDER BY 1"
)


class StoreCommandError(Exception):
    """A store that cannot be read or changed; the message says why and what to do."""


@dataclass
class StoreInfo:
    """Size on disk (the database plus its WAL files), and counts per model, per day (UTC) and per purpose."""

    path: str
    bytes: int
    responses: int
    by_model: list[dict[str, Any]] = field(default_factory=list)
    by_date: list[dict[str, Any]] = field(default_factory=list)
    by_purpose: list[dict[str, Any]] = field(default_factory=list)


def size_on_disk(path: Path) -> int:
    """Bytes of the store file and its ``-wal``/``-shm`` companions."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.is_file())


def _connect(path: Path, *, write: bool) -> sqlite3.Connection:
    if not path.is_file():
        raise StoreCommandError(f"no request store at {path} (set --path to the store, llm.store_path)")
    try:
        conn = (
            sqlite3.connect(str(path), timeout=30.0, isolation_level=None) if write else open_read_only(path)
        )
        conn.execute("SELECT COUNT(*) FROM responses").fetchone()
    except sqlite3.Error as exc:
        raise StoreCommandError(f"{path} is not a usable request store ({exc})") from exc
    return conn


def _groups(conn: sqlite3.Connection, key: str, label: str) -> list[dict[str, Any]]:
    return [
        {label: k, "responses": n, "prompt_tokens": p or 0, "completion_tokens": c or 0, "cost_usd": u or 0.0}
        for k, n, p, c, u in conn.execute(_GROUP_SQL.format(key=key))
    ]


def store_info(path: str | Path) -> StoreInfo:
    """Summarize the store at ``path`` (read-only)."""
    path = Path(path)
    conn = _connect(path, write=False)
    try:
        total = int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        return StoreInfo(
            str(path),
            size_on_disk(path),
            total,
            _groups(conn, "model", "model"),
            _groups(conn, "date(created, 'unixepoch')", "date"),
            _groups(conn, "purpose", "purpose"),
        )
    finally:
        conn.close()


def _where(models: list[str], older_than_days: float | None, now: float) -> tuple[str, list[Any]]:
    clauses, params = [], []
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
    rows matching both). Returns what matched per model and how many rows were deleted (0 on a dry run).

    Raises:
        StoreCommandError: No filter given, no store, or a store that cannot be written (read-only).
    """
    models = list(models or [])
    if not models and older_than_days is None:
        raise StoreCommandError(
            "prune needs --model and/or --older-than (nothing is deleted without a filter)"
        )
    if older_than_days is not None and older_than_days < 0:
        raise StoreCommandError(f"--older-than must be >= 0 days (got {older_than_days})")
    path = Path(path)
    if not dry_run and path.is_file() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        raise StoreCommandError(
            f"cannot prune {path}: the store (or its folder) is read-only here; "
            "prune a writable copy, or use --dry-run to see what would go"
        )
    where, params = _where(models, older_than_days, time.time() if now is None else now)
    conn = _connect(path, write=not dry_run)
    try:
        matched = [
            {"model": m, "responses": n, "cost_usd": c or 0.0}
            for m, n, c in conn.execute(
                f"SELECT model, COUNT(*), SUM(cost_usd) FROM responses WHERE {where} GROUP BY 1 ORDER BY 1",
                params,
            )
        ]
        known = [row[0] for row in conn.execute("SELECT DISTINCT model FROM responses ORDER BY 1")]
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
        return {
            "path": str(path),
            "matched": matched,
            "deleted": deleted,
            "dry_run": dry_run,
            "unknown_models": [m for m in models if m not in known],
            "known_models": known,
        }
    finally:
        conn.close()
