"""Drills on the request store file itself: a torn tail, a damaged table root, foreign and future files.

- A store cut short (1,000 bytes before a page boundary, or whole pages) is refused by the default check;
  ``recover`` copies only whole responses (never an answer of NUL bytes) and says what it left out.
- With page 2 (the table's root) overwritten, ``recover`` still copies every answer: from the leaf pages.
- A SQLite file that is no store (no tables and a ``user_version``; a ``responses(key, answer)`` table; another
  application id) is refused before anything is written to it, by a run and by ``merge --out``; a store made
  by a newer trustsim (``schema_version`` or ``key_version`` above this one's) is refused by name.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from trustsim.llm.store import (
    APPLICATION_ID,
    RequestStore,
    StoreDamaged,
    StoredResponse,
    canonical_request,
    request_key,
)
from trustsim.store_cli.__main__ import main as store_main
from trustsim.store_cli.manage import StoreCommandError, merge, recover, valid_row

ANSWERS = 77


def make_store(path: Path, n: int = ANSWERS) -> dict[str, str]:
    """A store of ``n`` answers (a few hundred bytes each, so the table spans pages); returns key -> answer."""
    store = RequestStore(path, journal="delete")
    rng = random.Random(3)
    answers = {}
    for i in range(n):
        messages = [{"role": "user", "content": f"question {i}: " + "x" * rng.randrange(50, 200)}]
        canonical = canonical_request("openai/m", None, messages, {"temperature": 0}, 0)
        key = request_key(canonical)
        text = json.dumps({"action": "pass", "reasoning": f"answer {i} " + "y" * rng.randrange(50, 200)})
        store.put(key, model="openai/m", api_base=None, sample=0, purpose="decision", canonical=canonical,
                  response=StoredResponse(text, 10, 20, 0.001, 0.5))  # fmt: skip
        answers[key] = text
    store.close()
    return answers


def stored(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, text FROM responses"))


def test_a_new_store_carries_its_application_id(tmp_path: Path) -> None:
    make_store(tmp_path / "s.sqlite", 2)
    with sqlite3.connect(tmp_path / "s.sqlite") as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_a_torn_tail_is_refused_and_recover_copies_only_whole_answers(tmp_path: Path, capsys) -> None:
    path = tmp_path / "torn.sqlite"
    answers = make_store(path)
    page = 4096
    pages = path.stat().st_size // page
    with path.open("r+b") as f:
        f.truncate(pages * page - 1000)  # 1,000 bytes short of the last page boundary
    with pytest.raises(StoreDamaged, match="torn"):
        RequestStore(path)
    with pytest.raises(StoreDamaged, match="torn"):
        RequestStore(path, read_only=True)
    assert store_main(["--path", str(path), "info"]) == 2
    assert "torn" in capsys.readouterr().err
    out = tmp_path / "recovered.sqlite"
    assert store_main(["--path", str(path), "recover", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "every response was copied" not in said and "torn" in said
    kept = stored(out)
    assert 0 < len(kept) < ANSWERS
    assert all(answers[k] == text and "\x00" not in text for k, text in kept.items())
    whole = tmp_path / "whole.sqlite"  # whole pages cut off: fewer pages than the header counts
    make_store(whole)
    with whole.open("r+b") as f:
        f.truncate((whole.stat().st_size // page - 2) * page)
    with pytest.raises(StoreDamaged, match="torn"):
        RequestStore(whole)


def test_valid_row_refuses_torn_answers() -> None:
    canonical = canonical_request("openai/m", None, [{"role": "user", "content": "q"}], {}, 0)
    row = (request_key(canonical), "openai/m", None, 0, "decision", canonical, "ok", 1, 2, 0.1, 0.2, 1.0,
           None, 0, 0)  # fmt: skip
    assert valid_row(row)
    assert not valid_row((*row[:6], "\x00" * 152, *row[7:]))  # an answer of NUL bytes
    assert not valid_row(("0" * 64, *row[1:]))  # a key that is not its request's hash
    assert not valid_row((*row[:5], "{not json", *row[6:]))


def test_recover_reads_the_leaf_pages_when_the_table_root_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "root.sqlite"
    answers = make_store(path)
    with sqlite3.connect(path) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'responses'").fetchone()
    assert root == 2
    with path.open("r+b") as f:
        f.seek((root - 1) * 4096)
        f.write(random.Random(1).randbytes(4096))
    with pytest.raises(StoreDamaged, match="damaged"):
        RequestStore(path)
    result = recover(path, tmp_path / "out.sqlite")
    assert result["recovered"] == ANSWERS and result["unreadable"] == 0, result
    assert stored(tmp_path / "out.sqlite") == answers
    RequestStore(tmp_path / "out.sqlite").close()  # a store that passes its checks


def _foreign(path: Path, kind: str) -> None:
    if kind in ("schema_version", "key_version"):
        make_store(path, 3)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '99' WHERE name = ?", (kind,))
        return
    conn = sqlite3.connect(path)
    if kind == "no_tables":
        conn.execute("PRAGMA user_version = 1")
    elif kind == "responses_table":
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, answer TEXT)")
        conn.execute("INSERT INTO responses VALUES ('k', 'a')")
    elif kind == "other_application":
        conn.execute("PRAGMA application_id = 42")
        conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("no_tables", "not a request store (no tables, user_version 1)"),
        ("responses_table", "not a request store (its responses table lacks"),
        ("other_application", "not a request store (its application id is 0x2a"),
        ("schema_version", "was made by a newer trustsim (schema_version 99; this trustsim knows up to 3)"),
        ("key_version", "was made by a newer trustsim (key_version 99; this trustsim knows up to 2)"),
    ],
)
def test_foreign_and_newer_files_are_refused_before_any_write(tmp_path: Path, kind: str, says: str) -> None:
    path = tmp_path / f"{kind}.sqlite"
    _foreign(path, kind)
    before = path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(StoreDamaged, match=re.escape(says)):
            RequestStore(path, read_only=read_only)
    source = tmp_path / "source.sqlite"
    make_store(source, 2)
    with pytest.raises(StoreCommandError, match=r"not a request store|newer trustsim"):
        merge([source], path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-journal").exists()


def test_merge_out_into_a_damaged_store_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "damaged.sqlite"
    make_store(out)
    with out.open("r+b") as f:
        f.seek(3 * 4096)
        f.write(random.Random(2).randbytes(4096 * 2))
    before = out.read_bytes()
    source = tmp_path / "source.sqlite"
    make_store(source, 2)
    with pytest.raises(StoreCommandError, match="recover"):
        merge([source], out)
    assert out.read_bytes() == before


def test_a_store_written_before_the_application_id_is_still_used(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    answers = make_store(path, 3)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA application_id = 0")
        conn.execute("DROP TABLE meta")  # as the first schema had it
    store = RequestStore(path)
    assert len(store) == 3 and store.meta("schema_version") == "3"
    store.close()
    assert stored(path) == answers
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
