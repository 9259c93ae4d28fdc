"""The request store: SQLite (WAL) keyed by the canonical request; cache, replay log and audit trail."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    api_base TEXT,
    sample INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    latency_s REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def canonical_request(
    model: str, api_base: str | None, messages: list[dict[str, Any]], params: dict[str, Any], sample: int
) -> str:
    """The canonical JSON text of a request (sorted keys, no whitespace); secrets are never part of it."""
    body = {"model": model, "api_base": api_base, "messages": messages, "params": params, "sample": sample}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(canonical: str) -> str:
    """SHA-256 hex digest of a canonical request."""
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float


class RequestStore:
    """A SQLite request store. Every ``put`` commits, so a killed run loses at most in-flight calls.

    Safe to share between processes (WAL); one connection per store object, used from one thread.
    ``read_only=True`` opens an existing store for replay without writing anything (it may sit on a read-only
    file or directory). Opening fails with ``OSError`` or ``sqlite3.Error`` when the store cannot be used.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if read_only:
            self._conn = open_read_only(self.path)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self._conn.execute("BEGIN IMMEDIATE")  # proves the store is writable now, not at the first answer
            self._conn.execute("ROLLBACK")
        except BaseException:
            self._conn.close()
            raise

    def get(self, key: str) -> StoredResponse | None:
        row = self._conn.execute(
            "SELECT text, prompt_tokens, completion_tokens, cost_usd, latency_s FROM responses WHERE key = ?",
            (key,),
        ).fetchone()
        return StoredResponse(*row) if row else None

    def put(
        self,
        key: str,
        *,
        model: str,
        api_base: str | None,
        sample: int,
        purpose: str,
        canonical: str,
        response: StoredResponse,
    ) -> None:
        if self.read_only:
            raise sqlite3.OperationalError("the request store was opened read-only (llm.replay_only)")
        self._conn.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                model,
                api_base,
                sample,
                purpose,
                canonical,
                response.text,
                response.prompt_tokens,
                response.completion_tokens,
                response.cost_usd,
                response.latency_s,
                time.time(),
            ),
        )

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def keys(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT key FROM responses")}

    def close(self) -> None:
        self._conn.close()


def open_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing store without writing: ``mode=ro``, else ``immutable=1`` (a read-only directory,
    where SQLite cannot create the WAL index)."""
    if not path.is_file():
        raise FileNotFoundError(f"no request store at {path}")
    uri = path.resolve().as_uri()
    last: sqlite3.Error | None = None
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=30.0, check_same_thread=False)
        try:
            conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            last = exc
    assert last is not None
    raise last
