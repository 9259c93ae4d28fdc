"""The request store, keyed by the canonical request: cache, replay log, audit trail and spend ledger.

Two layouts (see docs/llm.md, "Store shards"):

- :class:`RequestStore`: one SQLite file (``llm.store_path``), WAL mode, shared by the jobs of one machine.
- :class:`ShardedStore`: a directory (``llm.store_dir``) for jobs on many machines sharing a network
  filesystem. Each job writes only its own shard ``<dir>/<job>.sqlite`` (a single writer per file, rollback
  journal, no WAL: SQLite's WAL needs shared memory that network filesystems do not provide) and reads every
  other shard read-only for replay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic as _monotonic
from time import sleep as _sleep
from typing import Any, Protocol

from trustsim.rundir.lock import pid_alive

log = logging.getLogger(__name__)

# 2: the ``job`` column (the config hash of the job that sent the request); 3: the cache-token columns
SCHEMA_VERSION = 3
# 2: embedded-model requests are keyed with their model.local settings and weights digest (trustsim.llm.keying).
# A store first written with key version 1 keeps its embedded-model rows, which are no longer found (their
# settings and weights are unknown): those requests are sent again once. Other models' keys are unchanged.
KEY_VERSION = 2
# "Trst" in the SQLite header (PRAGMA application_id): this file is a request store
APPLICATION_ID = 0x54727374
SHARD_SUFFIX = ".sqlite"
LOCK_SUFFIX = ".writer"
RESCAN_S = 5.0  # how often a sharded store looks for shards written by other jobs

COLUMNS = (
    "key", "model", "api_base", "sample", "purpose", "request", "text", "prompt_tokens", "completion_tokens",
    "cost_usd", "latency_s", "created", "job", "cached_tokens", "cache_write_tokens",
)  # fmt: skip
# Columns added after the first schema, with their definitions (migrate adds them to an older store).
ADDED_COLUMNS = {
    "job": "TEXT",
    "cached_tokens": "INTEGER NOT NULL DEFAULT 0",  # prompt tokens read from the provider's prompt cache
    "cache_write_tokens": "INTEGER NOT NULL DEFAULT 0",  # prompt tokens written to it
}
BASE_COLUMNS = frozenset(c for c in COLUMNS if c not in ADDED_COLUMNS)
"""The columns of the first schema: a store written before the application id holds at least these."""
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS responses (
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
    created REAL NOT NULL,
    job TEXT,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0
)""",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
_INSERT = f"INSERT OR REPLACE INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_GET = "SELECT text, prompt_tokens, completion_tokens, cost_usd, latency_s, {cache}, request FROM responses WHERE key = ?"


def get_sql(conn: sqlite3.Connection) -> str:
    """The query of one stored response on this store file: a store written before the cache-token columns
    (opened read-only, so not migrated) replays with 0 cached tokens."""
    cols = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    cache = "cached_tokens, cache_write_tokens" if "cache_write_tokens" in cols else "0, 0"
    return _GET.format(cache=cache)


def canonical_request(
    model: str,
    api_base: str | None,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    sample: int,
    local: dict[str, Any] | None = None,
) -> str:
    """The canonical JSON text of a request (sorted keys, no whitespace); secrets are never part of it.

    ``local``: how the embedded model computes the answer (:func:`trustsim.llm.keying.local_block`); absent
    for every other model, whose canonical text is unchanged by it.
    """
    body = {"model": model, "api_base": api_base, "messages": messages, "params": params, "sample": sample}
    if local is not None:
        body["local"] = local
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
    cached_tokens: int = 0
    cache_write_tokens: int = 0


def migrate(conn: sqlite3.Connection) -> None:
    """Bring a writable store to the current schema: a store written before spend was tracked per job gets
    the ``job`` column (its old rows hold NULL: no job's spend, still replayed), one written before cache
    tokens were recorded the ``cached_tokens`` and ``cache_write_tokens`` columns (0 for its old rows)."""
    for statement in _SCHEMA:
        conn.execute(statement)
    cols = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    for name, definition in ADDED_COLUMNS.items():
        if name not in cols:
            conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {definition}")
    conn.execute("CREATE INDEX IF NOT EXISTS responses_job ON responses(job)")  # a job's spend, cheaply
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(
        "INSERT OR REPLACE INTO meta(name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
    )
    note_key_version(conn)


def note_key_version(conn: sqlite3.Connection) -> None:
    """Record :data:`KEY_VERSION` in a writable store; on a store written before it, say once how many
    embedded-model answers (``trustsim/...``) it holds under the old keys: kept, but not replayed."""
    row = conn.execute("SELECT value FROM meta WHERE name = 'key_version'").fetchone()
    if row is not None and int(row[0]) >= KEY_VERSION:
        return
    old = conn.execute("SELECT COUNT(*) FROM responses WHERE model LIKE 'trustsim/%'").fetchone()[0]
    if old:
        log.warning(
            "request store: %d embedded-model answers were stored before the request key covered "
            "model.local settings and the weights; they are kept but not replayed (sent again once)",
            old,
        )
    conn.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('key_version', ?)", (str(KEY_VERSION),))


def has_job_column(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "job" for row in conn.execute("PRAGMA table_info(responses)"))


def spend_of(conn: sqlite3.Connection, job: str | None = None) -> float:
    """Spend recorded in one store file: all of it, or the rows sent by ``job`` (0 for an old store)."""
    if job is None:
        return float(conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM responses").fetchone()[0])
    if not has_job_column(conn):
        return 0.0
    sql = "SELECT COALESCE(SUM(cost_usd), 0) FROM responses WHERE job = ?"
    return float(conn.execute(sql, (job,)).fetchone()[0])


def answer_lengths_of(conn: sqlite3.Connection, model: str, purpose: str) -> list[int]:
    """Completion tokens of every answer stored in one store file for ``model`` and ``purpose``."""
    sql = "SELECT completion_tokens FROM responses WHERE model = ? AND purpose = ?"
    return [int(row[0]) for row in conn.execute(sql, (model, purpose))]


def answer_latencies_of(conn: sqlite3.Connection, model: str) -> list[float]:
    """Seconds each answer stored in one store file for ``model`` took to arrive (replays excluded: a replay
    stores nothing)."""
    sql = "SELECT latency_s FROM responses WHERE model = ? AND latency_s > 0"
    return [float(row[0]) for row in conn.execute(sql, (model,))]


class Store(Protocol):
    """What a client reads and writes of a request store: one file (:class:`RequestStore`), a shard directory
    (:class:`ShardedStore`) or preview's read-only view (``trustsim.preview.client.LookupStore``)."""

    path: Path

    def get(self, key: str, canonical: str | None = None) -> StoredResponse | None: ...

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
    ) -> None: ...

    def spend(self, job: str | None = None) -> float: ...

    def meta(self, name: str) -> str | None: ...

    def set_meta(self, name: str, value: str) -> None: ...

    def close(self) -> None: ...


class RequestStore:
    """A SQLite request store. Every ``put`` commits, so a killed run loses at most in-flight calls.

    ``journal="wal"`` (default): safe to share between processes of one machine. ``journal="delete"``: a
    rollback journal, for a file with a single writer on a network filesystem (a shard). One connection per
    store object. ``read_only=True`` opens an existing store for replay without writing anything (it may sit
    on a read-only file or directory). ``job`` is written into every row this object stores. Opening fails
    with ``OSError`` or ``sqlite3.Error`` when the store cannot be used.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        read_only: bool = False,
        job: str | None = None,
        journal: str = "wal",
        check: str = "quick",
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.job = job
        self._conn = _open_checked(self.path, read_only=read_only, check=check)
        if read_only:
            self._get = get_sql(self._conn)
            return
        try:
            self._conn.execute(f"PRAGMA journal_mode={'WAL' if journal == 'wal' else 'DELETE'}")
            self._conn.execute(f"PRAGMA synchronous={'NORMAL' if journal == 'wal' else 'FULL'}")
            self._conn.execute("BEGIN IMMEDIATE")  # proves the store is writable now, not at the first answer
            migrate(self._conn)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.close()
            raise
        self._get = get_sql(self._conn)

    def get(self, key: str, canonical: str | None = None) -> StoredResponse | None:
        """The stored response of ``key``; with ``canonical``, only a row whose request is that text.
        A damaged page met here raises :class:`StoreDamaged` (the request is not sent again)."""
        try:
            row = self._conn.execute(self._get, (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise StoreDamaged(self.path, f"is damaged ({exc})") from None
            raise
        return StoredResponse(*row[:7]) if row and (canonical is None or row[7] == canonical) else None

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
        r = response
        row = (key, model, api_base, sample, purpose, canonical, r.text, r.prompt_tokens, r.completion_tokens,
               r.cost_usd, r.latency_s, time.time(), self.job, r.cached_tokens, r.cache_write_tokens)  # fmt: skip
        self._conn.execute(_INSERT, row)

    def spend(self, job: str | None = None) -> float:
        """Recorded spend in USD: all rows, or those sent by ``job``."""
        return spend_of(self._conn, job)

    def answer_lengths(self, model: str, purpose: str) -> list[int]:
        """Completion tokens of the stored answers of ``model`` (litellm id) for ``purpose`` (preview's
        expected answer lengths)."""
        return answer_lengths_of(self._conn, model, purpose)

    def answer_latencies(self, model: str) -> list[float]:
        """Seconds per stored answer of ``model`` (preview's expected time on the embedded model)."""
        return answer_latencies_of(self._conn, model)

    def meta(self, name: str) -> str | None:
        """A value of the store's ``meta`` table (None when absent)."""
        with contextlib.suppress(sqlite3.OperationalError):  # an old store read-only: no meta table
            row = self._conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
            return None if row is None else str(row[0])
        return None

    def set_meta(self, name: str, value: str) -> None:
        """Remember a value in the ``meta`` table (a read-only store remembers nothing)."""
        if not self.read_only:
            self._conn.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (name, value))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def keys(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT key FROM responses")}

    def close(self) -> None:
        self._conn.close()


def _open_checked(path: Path, *, read_only: bool, check: str) -> sqlite3.Connection:
    """A connection to the store file ``path`` (created when it does not exist, unless ``read_only``), after
    the checks of an existing file: header (:func:`check_store_header`) and :func:`check_integrity`."""
    check_store_header(path)  # an emptied or foreign file is refused, never re-created
    existed = path.is_file()
    if read_only:
        conn = open_read_only(path, check=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        if existed:
            check_integrity(conn, path, check)
    except BaseException:
        conn.close()
        raise
    return conn


def open_read_only(path: Path, *, immutable_ok: bool = True, check: bool = False) -> sqlite3.Connection:
    """Open an existing store without writing: ``mode=ro``, else ``immutable=1`` (a read-only directory,
    where SQLite cannot create the WAL index). ``immutable_ok=False`` (another job's shard, which may be
    written while we read): ``mode=ro`` only, so SQLite's locks and hot-journal check stay in force."""
    if not path.is_file():
        raise FileNotFoundError(f"no request store at {path}")
    uri = path.resolve().as_uri()
    last: sqlite3.Error | None = None
    for flags in ("mode=ro", "mode=ro&immutable=1") if immutable_ok else ("mode=ro",):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=30.0, check_same_thread=False)
        try:
            conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            return conn
        except sqlite3.Error as exc:
            try:
                if check and "no such table" in str(exc):
                    check_identity(conn, path)  # what else the file is, when that can be said
                    raise StoreDamaged(path, NOT_A_STORE) from None
            finally:
                conn.close()
            if check and is_damage(exc):
                raise StoreDamaged(path, f"is damaged ({exc})") from None
            last = exc
    assert last is not None
    raise last


# -- integrity ---------------------------------------------------------------------------------------------
SQLITE_MAGIC = b"SQLite format 3\x00"
_DAMAGE_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)
NOT_A_STORE_PREFIX = "is a SQLite database but not a request store"
NOT_A_STORE = f"{NOT_A_STORE_PREFIX} (no responses table)"
NEWER = "was made by a newer trustsim"
EMPTY_GRACE_S = 1.0  # a 0-byte store file may be one another process is creating: look again for this long


class StoreDamaged(Exception):
    """A store file that holds no usable store: empty (0 bytes), not a SQLite database, or damaged."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"the request store {path} {problem}")
        self.path = Path(path)
        self.problem = problem


def is_damage(exc: BaseException) -> bool:
    """Whether a SQLite error means a damaged file (not a busy lock or a missing table)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _DAMAGE_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def check_store_header(path: Path, grace_s: float = EMPTY_GRACE_S) -> None:
    """Refuse an existing store file that is empty (0 bytes, after ``grace_s`` for one being created) or
    does not start as a SQLite database. A path that does not exist passes (a new store is created)."""
    deadline = _monotonic() + grace_s
    while True:
        try:
            with path.open("rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            return
        if head or _monotonic() >= deadline:
            break
        _sleep(0.05)
    if not head:
        raise StoreDamaged(
            path, "exists but is empty (0 bytes): it holds no stored answer (was it truncated?)"
        )
    if head != SQLITE_MAGIC:
        raise StoreDamaged(path, "is not a request store (not a SQLite database)")


def check_integrity(conn: sqlite3.Connection, path: Path, check: str = "quick") -> None:
    """Check a store file before it is used: a torn tail (:func:`torn_tail`), ``PRAGMA quick_check``
    (``check="full"``: ``integrity_check``, which also compares every index with its table), the store's own
    table, and that the file is a request store of a version this trustsim knows (:func:`check_identity`).
    Raise :class:`StoreDamaged` naming the first problem."""
    pragma = "integrity_check" if check == "full" else "quick_check"
    try:
        torn = _steady(lambda: torn_tail(conn, path))
        if torn:
            raise StoreDamaged(path, f"is damaged ({torn})")
        problems = [row[0] for row in conn.execute(f"PRAGMA {pragma}(5)")]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "responses" in tables:
            conn.execute("SELECT COUNT(*) FROM responses").fetchone()
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            raise StoreDamaged(path, f"is damaged ({exc})") from None
        raise
    if problems != ["ok"]:
        found = " ".join(" ".join(problems).replace("*** in database main ***", "").split())
        raise StoreDamaged(path, f"is damaged (PRAGMA {pragma}: {found[:240]})")
    check_identity(conn, path)


def _steady(probe: Any, tries: int = 3) -> str | None:
    """``probe()`` (a problem or None), asked again after a pause while it reports one: a file another
    process is extending or checkpointing right now may look torn for an instant; a torn one stays so."""
    for attempt in range(tries):
        problem = probe()
        if problem is None or attempt == tries - 1:
            return problem
        _sleep(0.2)
    return None


def torn_tail(conn: sqlite3.Connection, path: Path) -> str | None:
    """What is wrong with the end of the store file, or None: a size that is not a whole number of pages, or
    fewer pages than its header counts (a file cut short: its last pages would read as zeros, which
    ``PRAGMA quick_check`` does not notice)."""
    try:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        with path.open("rb") as f:
            header = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except (OSError, sqlite3.Error):
        return None  # unreadable here: the checks that follow say why
    if len(header) < 100 or page_size <= 0:
        return f"torn: {size} bytes, less than one page" if size else None
    if size % page_size:
        return f"torn: {size} bytes is not a whole number of {page_size}-byte pages"
    counted = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]  # the header's page count is current (SQLite >= 3.7.0)
    if valid and counted and size < counted * page_size:
        return f"torn: {size // page_size} of the {counted} pages its header counts"
    return None


def check_identity(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite file that is not a request store, or one made by a newer trustsim, before anything is
    written to it. A store carries :data:`APPLICATION_ID`; one written before it did (application id 0) must
    hold a ``responses`` table with the first schema's columns. A database without tables and with an
    application id and ``user_version`` of 0 is a store being created (adopted); any other is refused."""
    app = int(conn.execute("PRAGMA application_id").fetchone()[0])
    user = int(conn.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app not in (0, APPLICATION_ID):
        raise StoreDamaged(path, f"{NOT_A_STORE_PREFIX} (its application id is {app:#x}, not a store's)")
    if not tables:
        if app == 0 and user != 0:
            raise StoreDamaged(path, f"{NOT_A_STORE_PREFIX} (no tables, user_version {user})")
        return
    if "responses" not in tables:
        raise StoreDamaged(path, NOT_A_STORE)
    have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    if missing := sorted(BASE_COLUMNS - have):
        raise StoreDamaged(
            path,
            f"{NOT_A_STORE_PREFIX} (its responses table lacks {', '.join(missing[:4])}"
            + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
            + ")",
        )
    if "meta" not in tables:
        return
    for name, known in (("schema_version", SCHEMA_VERSION), ("key_version", KEY_VERSION)):
        row = conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        try:
            value = int(row[0]) if row is not None else 0
        except (TypeError, ValueError):
            raise StoreDamaged(path, f"{NOT_A_STORE_PREFIX} (its {name} is {str(row[0])[:40]!r})") from None
        if value > known:
            raise StoreDamaged(
                path, f"was made by a newer trustsim ({name} {value}; this trustsim knows up to {known})"
            )


# -- shards ------------------------------------------------------------------------------------------------
def shard_files(directory: str | Path) -> list[Path]:
    """Every shard of a store directory, sorted by name (the replay order after the job's own shard)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith(SHARD_SUFFIX) and p.is_file())


def shard_name(job: str | None) -> str:
    """The shard stem of a job: its config hash (first 16 hex digits), else host and pid (one writer)."""
    if job:
        return job[:16]
    return f"{socket.gethostname()}-{os.getpid()}"


def writer_holder(lock: Path) -> dict[str, Any]:
    """The content of a shard's writer lock file (``{}`` when unreadable)."""
    try:
        data = json.loads(lock.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def writer_alive(holder: dict[str, Any]) -> bool:
    """Whether a writer lock's holder may still run: a process on another host counts as alive."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        return pid_alive(int(holder.get("pid", -1)))
    except (TypeError, ValueError):
        return False


def claim_shard(directory: Path, job: str | None) -> tuple[Path, Path]:
    """Claim a shard this process alone writes: ``<job>.sqlite``, or ``<job>~2.sqlite``... when another
    live process (the same job run twice at once) holds it. The claim is a lock file created with
    ``O_CREAT | O_EXCL`` (atomic on NFS v3+) holding host and pid; one left by a dead process of this host is
    taken over. Returns (shard path, lock path)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = shard_name(job)
    for n in range(1, 1000):
        shard = directory / f"{stem}{'' if n == 1 else f'~{n}'}{SHARD_SUFFIX}"
        lock = shard.with_name(shard.name + LOCK_SUFFIX)
        holder = {"host": socket.gethostname(), "pid": os.getpid(), "job": job, "started": time.time()}
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if writer_alive(writer_holder(lock)):
                    break
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # a dead process of this host left it
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(holder, f)
            return shard, lock
    raise OSError(f"no free shard for job {stem} in {directory}")


@dataclass
class _Foreign:
    """Another job's shard as this job sees it: a read-only connection (opened on first use), the hashes of
    the keys it holds, the last row read, and the file signature when they were read."""

    conn: sqlite3.Connection | None = None
    keys: set[int] = field(default_factory=set)
    last_rowid: int = 0
    sig: tuple[int, int] | None = None
    hits: int = 0


def _signature(path: Path) -> tuple[int, int] | None:
    """(size, SQLite change counter) of a store file, read without locking: a hint that it changed (the
    counter grows with every commit of a rollback-journal database); None when unreadable."""
    try:
        with path.open("rb") as f:
            header = f.read(28)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    return size, int.from_bytes(header[24:28], "big") if len(header) >= 28 else -1


class ShardedStore:
    """A store directory (``llm.store_dir``): this job writes one shard, replay reads every shard.

    - Writes go to the job's own shard only (single writer, rollback journal, ``synchronous=FULL``), so two
      machines never write one file and no WAL shared-memory index is needed.
    - Reads try the own shard, then every other shard (sorted by name) opened ``mode=ro``: a reader never
      writes another job's file. A hit from another shard must carry this exact canonical request; a passing
      error reading another shard (a writer mid-commit, a hot journal of a killed job) counts as a miss for
      that shard: the request is then sent and stored in the own shard. A shard that is damaged, empty
      without a live writer, or not a store raises :class:`StoreDamaged` (its answers are never bought
      again silently). Shards written by other jobs during the run are picked up every few seconds.
    - ``check``: ``quick`` runs ``PRAGMA quick_check`` on the own shard at open and checks every other
      shard's header when first seen; ``full`` runs ``PRAGMA integrity_check`` on every shard.
    - ``read_only=True`` (``llm.replay_only``) writes nothing: no shard, no lock.
    """

    def __init__(
        self, directory: str | Path, *, job: str | None = None, read_only: bool = False, check: str = "quick"
    ) -> None:
        self.directory = Path(directory)
        self.job = job
        self.read_only = read_only
        self.check = check
        self._lock: Path | None = None
        self._own: RequestStore | None = None
        if read_only:
            if not shard_files(self.directory):
                raise FileNotFoundError(f"no request store shard in {self.directory}")
        else:
            shard, self._lock = claim_shard(self.directory, job)
            try:
                self._own = RequestStore(shard, job=job, journal="delete", check=check)
            except BaseException:
                self._release()
                raise
        self.path = self._own.path if self._own is not None else self.directory
        self._others: dict[Path, _Foreign] = {}
        self._scanned = -1e9
        self._spend_cache: dict[tuple[Path, str | None], tuple[tuple[int, int], float]] = {}
        try:
            self._scan()
        except BaseException:
            self.close()
            raise

    def _scan(self, *, force: bool = False) -> None:
        """Find new shards and read the keys each shard gained since the last look (a shard whose size and
        change counter are unchanged is not queried). At most every ``RESCAN_S`` seconds unless forced."""
        now = time.monotonic()
        if not force and now - self._scanned < RESCAN_S:
            return
        self._scanned = now
        own = self._own.path.resolve() if self._own is not None else None
        for path in shard_files(self.directory):
            if path.resolve() == own:
                continue
            shard = self._others.setdefault(path, _Foreign())
            sig = _signature(path)
            if sig is None or sig == shard.sig or not self._usable(path, sig):
                continue
            conn = self._other(path)
            if conn is None:
                continue
            try:
                if shard.sig is None and self.check == "full":
                    check_integrity(conn, path, "full")
                rows = conn.execute(
                    "SELECT rowid, key FROM responses WHERE rowid > ? ORDER BY rowid", (shard.last_rowid,)
                ).fetchall()
            except sqlite3.Error as exc:  # a writer mid-commit, a hot journal: looked at again next time
                log.debug("shard %s: %s", path, exc)
                self._close(path)
                if is_damage(exc):
                    self._confirm_damage(path, exc)
                continue
            shard.keys.update(hash(k) for _, k in rows)
            if rows:
                shard.last_rowid = rows[-1][0]
            shard.sig = sig
            if not shard.hits:
                self._close(path)  # one open file per shard would not scale to sweeps of thousands of jobs

    def _usable(self, path: Path, sig: tuple[int, int]) -> bool:
        """Whether another job's shard can be read now: False while its job is creating it (0 bytes, a live
        writer); :class:`StoreDamaged` for one that is empty with no writer, or not a SQLite database."""
        if sig[0] == 0:
            lock = path.with_name(path.name + LOCK_SUFFIX)
            if lock.exists() and writer_alive(writer_holder(lock)):
                return False
        check_store_header(path, grace_s=0.0)
        return True

    def _confirm_damage(self, path: Path, exc: BaseException) -> None:
        """Another job's shard read as damaged: look again (a reader on a network filesystem may meet a page
        mid-write); raise :class:`StoreDamaged` when it stays damaged, return when it reads cleanly now."""
        for _ in range(3):
            _sleep(0.2)
            try:
                conn = open_read_only(path, immutable_ok=False)
            except sqlite3.Error as again:
                if not is_damage(again):
                    return
                continue
            try:
                check_integrity(conn, path, "quick")
                return
            except StoreDamaged:
                continue
            except sqlite3.Error:
                return
            finally:
                conn.close()
        raise StoreDamaged(path, f"is damaged ({exc})")

    def _other(self, path: Path) -> sqlite3.Connection | None:
        shard = self._others.setdefault(path, _Foreign())
        if shard.conn is None:
            try:
                shard.conn = open_read_only(path, immutable_ok=False)
            except (OSError, sqlite3.Error) as exc:
                log.debug("shard %s not readable now (%s)", path, exc)
                if isinstance(exc, sqlite3.Error) and is_damage(exc):
                    self._confirm_damage(path, exc)
                return None
        return shard.conn

    def _close(self, path: Path) -> None:
        shard = self._others[path]
        if shard.conn is not None:
            shard.conn.close()
            shard.conn = None

    def get(self, key: str, canonical: str | None = None) -> StoredResponse | None:
        """The own shard's response, else another shard's whose stored request is ``canonical`` (when
        given). Other shards are asked only for keys they are known to hold (their key lists are refreshed
        every ``RESCAN_S`` seconds), so a miss costs no file access."""
        if self._own is not None:
            hit = self._own.get(key, canonical)
            if hit is not None:
                return hit
        self._scan()
        h = hash(key)
        for path, shard in self._others.items():
            if h not in shard.keys:
                continue
            conn = self._other(path)
            if conn is None:
                continue
            try:
                row = conn.execute(get_sql(conn), (key,)).fetchone()
            except sqlite3.Error as exc:  # a writer mid-commit, a hot journal: a miss here, retried later
                log.debug("shard %s: %s", path, exc)
                self._close(path)
                if is_damage(exc):
                    self._confirm_damage(path, exc)
                continue
            if row and (canonical is None or row[7] == canonical):
                shard.hits += 1  # kept open: this job replays from it
                return StoredResponse(*row[:7])
        return None

    def put(self, key: str, **row: Any) -> None:
        if self._own is None:
            raise sqlite3.OperationalError("the request store was opened read-only (llm.replay_only)")
        self._own.put(key, **row)

    def meta(self, name: str) -> str | None:
        """A value of the own shard's ``meta`` table (None when absent or read-only)."""
        return self._own.meta(name) if self._own is not None else None

    def set_meta(self, name: str, value: str) -> None:
        if self._own is not None:
            self._own.set_meta(name, value)

    def spend(self, job: str | None = None) -> float:
        """Recorded spend over every shard: all rows, or those sent by ``job`` (a shard whose size and change
        counter are unchanged is not queried again)."""
        self._scan(force=True)
        total = self._own.spend(job) if self._own is not None else 0.0
        for path in list(self._others):
            sig = _signature(path)
            cached = self._spend_cache.get((path, job))
            if cached is not None and sig is not None and cached[0] == sig:
                total += cached[1]
                continue
            conn = self._other(path)
            if conn is None:
                continue
            try:
                value = spend_of(conn, job)
            except sqlite3.Error as exc:
                self._close(path)
                if is_damage(exc):
                    self._confirm_damage(path, exc)
                continue
            if sig is not None:
                self._spend_cache[(path, job)] = (sig, value)
            total += value
        return total

    def answer_lengths(self, model: str, purpose: str) -> list[int]:
        """Completion tokens of the stored answers of ``model`` for ``purpose``, over every shard."""
        self._scan(force=True)
        out = self._own.answer_lengths(model, purpose) if self._own is not None else []
        for path in list(self._others):
            conn = self._other(path)
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    out += answer_lengths_of(conn, model, purpose)
        return out

    def answer_latencies(self, model: str) -> list[float]:
        """Seconds per stored answer of ``model``, over every shard."""
        self._scan(force=True)
        out = self._own.answer_latencies(model) if self._own is not None else []
        for path in list(self._others):
            conn = self._other(path)
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    out += answer_latencies_of(conn, model)
        return out

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> set[str]:
        self._scan(force=True)
        out = self._own.keys() if self._own is not None else set()
        for path in list(self._others):
            conn = self._other(path)
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    out |= {row[0] for row in conn.execute("SELECT key FROM responses")}
        return out

    def _release(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                if writer_holder(self._lock).get("pid") == os.getpid():
                    self._lock.unlink()
            self._lock = None

    def close(self) -> None:
        for path in self._others:
            self._close(path)
        self._others.clear()
        if self._own is not None:
            self._own.close()
        self._release()
