"""Each LLM decision's exact request and raw response, read from the run's request store when the site is built.

A model's decision event records its request-store key (``request``: the SHA-256 of the canonical request, see
``docs/llm.md``). The store is SQLite; it is opened read-only (``mode=ro``, else ``immutable=1`` for a store
on a read-only disk) and never written. A row found by its key is that exact request, whichever file holds
it, so the store is looked for where the run's configuration says (``llm.store_path`` or ``llm.store_dir``;
a relative path from the working directory and from each folder above the run directory, as a job started
from the project folder writes it), unless ``view --store PATH`` names it.

The requests of one unit the page loads together (an escape-room game, a reliance scenario, an arena match,
a trust-game session) go into one data file, loaded only when a decision's request is opened. Messages
repeated within the file (the rules, a growing transcript's earlier turns) are written once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustsim.llm.store import open_read_only
from trustsim.rundir import Run

DEFAULT_STORE = "outputs/request_store.sqlite"  # llm.store_path's default (trustsim.llm.config)
_ROW = (
    "SELECT request, text, prompt_tokens, completion_tokens, cost_usd, latency_s, created, purpose, sample "
    "FROM responses WHERE key = ?"
)


class StoreReader:
    """Read-only lookups by key in one store file or every shard (``*.sqlite``) of a store directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        files = sorted(path.glob("*.sqlite")) if path.is_dir() else [path]
        self._conns = [open_read_only(f) for f in files]

    def get(self, key: str) -> dict[str, Any] | None:
        for conn in self._conns:
            row = conn.execute(_ROW, (key,)).fetchone()
            if row is not None:
                return _entry(row)
        return None

    def close(self) -> None:
        for conn in self._conns:
            conn.close()


def _entry(row: tuple[Any, ...]) -> dict[str, Any]:
    """A store row as the page shows it: the request as sent (model, api base, messages, settings, sample) and
    the raw answer with its accounting."""
    request, text, prompt_tokens, completion_tokens, cost_usd, latency_s, created, purpose, sample = row
    try:
        body = json.loads(request)
    except ValueError:
        body = {"unreadable": request}
    return {
        "model": body.get("model"),
        "api_base": body.get("api_base"),
        "purpose": purpose,
        "sample": sample,
        "params": body.get("params") or {},
        "messages": body.get("messages") or [],
        "response": text,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": cost_usd,
        "latency_s": latency_s,
        "created": created,
    }


def configured_store(run: Run) -> str:
    """The store a run's configuration names (``llm.store_dir``, else ``llm.store_path``), as written."""
    raw = run.manifest.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    llm = config.get("llm") or {}
    return llm.get("store_dir") or llm.get("store_path") or DEFAULT_STORE


def locate_store(run: Run) -> tuple[Path | None, str]:
    """Where the run's store is (None when it is not found) and the path it was looked for by."""
    named = configured_store(run)
    path = Path(named).expanduser()
    if path.is_absolute():
        return (path if path.exists() else None), named
    for base in (Path.cwd(), *run.path.resolve().parents):
        if (base / path).exists():
            return base / path, named
    return None, named


@dataclass
class Requests:
    """The request data of one run: where its store is (or why there is none), for the run page."""

    store: StoreReader | None
    note: str
    found: int = 0
    missing: int = 0

    def page_info(self) -> dict[str, Any]:
        return {
            "store": str(self.store.path) if self.store is not None else None,
            "note": self.note,
            "found": self.found,
            "missing": self.missing,
        }

    def write(self, w: Any, rel: str, key: str, request_keys: Iterable[str | None]) -> None:
        """Write the requests of one unit (its decisions' keys) as ``TS.put(key, {texts, entries})``:
        ``entries`` maps each key to its entry (None when the store has no such row); message contents are
        indices into ``texts``."""
        wanted = sorted({k for k in request_keys if k})
        if not wanted:
            return
        texts: list[str] = []
        index: dict[str, int] = {}
        entries: dict[str, Any] = {}
        for k in wanted:
            entry = self.store.get(k) if self.store is not None else None
            if entry is None:
                self.missing += 1
                entries[k] = None
                continue
            self.found += 1
            for message in entry["messages"]:
                content = message.get("content")
                if isinstance(content, str):
                    if content not in index:
                        index[content] = len(texts)
                        texts.append(content)
                    message["content"] = index[content]
            entries[k] = entry
        w.put(rel, key, {"texts": texts, "entries": entries})


@dataclass
class StoreCache:
    """The stores of a build, each opened once (a sweep's jobs share one), all closed at the end.

    ``override``: the store ``view --store`` names, used for every run."""

    override: Path | None = None
    _open: dict[Path, StoreReader | str] = field(default_factory=dict)

    def for_run(self, run: Run) -> Requests:
        if self.override is not None:
            path: Path | None = self.override
            named = str(self.override)
        else:
            path, named = locate_store(run)
        if path is None:
            return Requests(
                None,
                f"no request store found at {named} (the run's llm.store_path / llm.store_dir, looked for from "
                "the working directory and above the run directory); build with --store PATH to name it",
            )
        resolved = path.resolve()
        if resolved not in self._open:
            try:
                self._open[resolved] = StoreReader(resolved)
            except (OSError, sqlite3.Error) as exc:
                self._open[resolved] = f"the request store {path} cannot be read ({exc})"
        reader = self._open[resolved]
        if isinstance(reader, str):
            return Requests(None, reader)
        return Requests(reader, f"read from the request store {path}")

    def close(self) -> None:
        for reader in self._open.values():
            if isinstance(reader, StoreReader):
                reader.close()
        self._open.clear()


NO_STORE_RUN = "this run sent no request to a language model"
REFERENCE_NOTE = "the reference study's logs hold no requests: only the answers are shown"
