"""Store shards (``llm.store_dir``): one writer per shard, replay across shards, old stores, merge, info/prune."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import trustsim.llm.store as llm_store
from tests.llm.helpers import REPO, client_of, llm_dict, model_dict
from trustsim.llm import ChatRequest, StoreError
from trustsim.llm.store import (
    LOCK_SUFFIX,
    RequestStore,
    ShardedStore,
    StoreDamaged,
    StoredResponse,
    canonical_request,
    request_key,
)
from trustsim.store_cli import merge, prune, store_info
from trustsim.store_cli.__main__ import main

JOB_A, JOB_B, JOB_C = "a" * 64, "b" * 64, "c" * 64


def put(store: RequestStore | ShardedStore, text: str, answer: str | None = None, cost: float = 0.01) -> str:
    canonical = canonical_request("openai/m", None, [{"role": "user", "content": text}], {}, 0)
    key = request_key(canonical)
    response = StoredResponse(answer or f"answer to {text}", 3, 2, cost, 0.1)
    store.put(key, model="openai/m", api_base=None, sample=0, purpose="decision", canonical=canonical,
              response=response)  # fmt: skip
    return key


def key_of(text: str) -> tuple[str, str]:
    canonical = canonical_request("openai/m", None, [{"role": "user", "content": text}], {}, 0)
    return request_key(canonical), canonical


def test_each_job_writes_its_own_shard_and_replays_every_shard(tmp_path: Path, monkeypatch) -> None:
    a = ShardedStore(tmp_path, job=JOB_A)
    b = ShardedStore(tmp_path, job=JOB_B)
    put(a, "x")
    put(b, "y", cost=0.5)
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == [
        f"{JOB_A[:16]}.sqlite",
        f"{JOB_B[:16]}.sqlite",
    ]
    assert (tmp_path / f"{JOB_A[:16]}.sqlite{LOCK_SUFFIX}").is_file()  # the writer's claim
    assert not list(tmp_path.glob("*-wal")) and not list(tmp_path.glob("*-shm"))  # no WAL on shards
    conn = sqlite3.connect(a.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert conn.execute("SELECT job FROM responses").fetchall() == [(JOB_A,)]
    conn.close()
    c = ShardedStore(tmp_path, job=JOB_C)  # a third job sees both shards, writes only its own
    for text in ("x", "y"):
        key, canonical = key_of(text)
        hit = c.get(key, canonical)
        assert hit is not None and hit.text == f"answer to {text}"
    assert a.get(key_of("y")[0]) is None  # b's shard appeared after a looked (every RESCAN_S seconds)
    monkeypatch.setattr(llm_store, "RESCAN_S", 0.0)
    assert a.get(key_of("y")[0]) is not None  # found at the next look
    assert c.spend() == pytest.approx(0.51) and c.spend(JOB_B) == pytest.approx(0.5) and c.spend(JOB_C) == 0
    for store in (a, b, c):
        store.close()
    assert not list(tmp_path.glob(f"*{LOCK_SUFFIX}"))  # claims released


def test_same_job_twice_at_once_gets_a_second_shard_and_stale_claims_are_taken_over(tmp_path: Path) -> None:
    first = ShardedStore(tmp_path, job=JOB_A)
    second = ShardedStore(tmp_path, job=JOB_A)  # e.g. a sweep submitted twice: never two writers on one file
    assert first.path.name == f"{JOB_A[:16]}.sqlite" and second.path.name == f"{JOB_A[:16]}~2.sqlite"
    put(first, "x", cost=1.0)
    put(second, "y", cost=2.0)
    assert second.spend(JOB_A) == pytest.approx(3.0)  # the job's spend spans its shards
    second.close()
    first.close()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    lock = tmp_path / f"{JOB_A[:16]}.sqlite{LOCK_SUFFIX}"
    lock.write_text(json.dumps({"host": os.uname().nodename, "pid": int(dead.stdout)}))  # killed job's claim
    again = ShardedStore(tmp_path, job=JOB_A)
    assert again.path.name == f"{JOB_A[:16]}.sqlite" and again.get(key_of("x")[0]) is not None
    again.close()


def test_foreign_rows_are_misses_and_a_junk_shard_is_refused(tmp_path: Path) -> None:
    other = RequestStore(tmp_path / "other.sqlite", journal="delete")
    key, canonical = key_of("x")
    other.put(key, model="openai/m", api_base=None, sample=0, purpose="decision", canonical="{\"forged\":1}",
              response=StoredResponse("forged", 1, 1, 0.0, 0.1))  # fmt: skip
    other.close()
    store = ShardedStore(tmp_path, job=JOB_A)
    assert store.get(key, canonical) is None  # the row's request is not this request
    assert store.get(key_of("nothing")[0]) is None
    store.close()
    (tmp_path / "junk.sqlite").write_text("not a database")  # its answers would be bought again: refused
    with pytest.raises(StoreDamaged, match=r"junk\.sqlite is not a request store"):
        ShardedStore(tmp_path, job=JOB_A)
    assert not list(tmp_path.glob(f"*{LOCK_SUFFIX}"))  # the refused job released its shard


WRITER = """
import sys, time
from tests.store_shards.test_shards import put
from trustsim.llm.store import ShardedStore
store = ShardedStore(sys.argv[1], job="w" * 64)
print("ready", flush=True)
sys.stdin.readline()  # the reader has opened the shard directory: write while it reads
for i in range(int(sys.argv[2])):
    put(store, f"q{i}", f"a{i}:" + "x" * (i % 7) * 900)  # some answers span overflow pages
    time.sleep(0.002)  # paced, so the writes overlap the reads even on a fast disk
store.close()
"""


@pytest.mark.slow
def test_reading_a_shard_while_its_job_writes_it(tmp_path: Path, monkeypatch) -> None:
    """A reader of another job's shard never errors and never returns a wrong answer while it is written."""
    monkeypatch.setattr(llm_store, "RESCAN_S", 0.0)  # re-read the shard's new keys at every lookup
    n = 400
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    reader = ShardedStore(tmp_path, job=JOB_A)
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.close()
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        for i in range(0, n, 7):
            key, canonical = key_of(f"q{i}")
            hit = reader.get(key, canonical)
            if hit is not None:
                assert hit.text == f"a{i}:" + "x" * (i % 7) * 900
                seen.add(i)
    assert proc.wait(timeout=60) == 0
    for i in range(n):
        key, canonical = key_of(f"q{i}")
        assert reader.get(key, canonical) is not None
    assert seen  # answers were read while the shard was being written
    reader.close()


def old_store(path: Path) -> None:
    """A store as written before the ``job`` column (schema version 1)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, api_base TEXT, sample INTEGER NOT "
        "NULL, purpose TEXT NOT NULL, request TEXT NOT NULL, text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,"
        " completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, latency_s REAL NOT NULL, created REAL NOT "
        "NULL); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
    )
    key, canonical = key_of("old")
    conn.execute("INSERT INTO responses VALUES (?, 'openai/m', NULL, 0, 'decision', ?, 'old answer', 1, 1, 0.25,"
                 " 0.1, 0)", (key, canonical))  # fmt: skip
    conn.commit()
    conn.close()


def test_old_store_is_migrated_and_still_replays(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old_store(path)
    ro = RequestStore(path, read_only=True)  # read-only: no schema change, still replays
    assert ro.get(*key_of("old")).text == "old answer" and ro.spend(JOB_A) == 0 and ro.spend() == 0.25
    ro.close()
    store = RequestStore(path, job=JOB_A)
    assert store.get(*key_of("old")).text == "old answer"
    put(store, "new", cost=1.0)
    assert store.spend(JOB_A) == 1.0 and store.spend() == 1.25  # old rows belong to no job
    store.close()
    conn = sqlite3.connect(path)
    assert (
        conn.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()[0] == "3"
    )  # job, cache tokens
    assert sorted(conn.execute("SELECT text, job FROM responses").fetchall()) == [
        ("answer to new", JOB_A),
        ("old answer", None),
    ]


def test_merge_info_and_prune_on_a_shard_directory(tmp_path: Path, capsys) -> None:
    shards = tmp_path / "shards"
    a = ShardedStore(shards, job=JOB_A)
    b = ShardedStore(shards, job=JOB_B)
    put(a, "x")
    put(a, "both")
    put(b, "both", "another answer")  # the same request answered twice (no replay between the jobs)
    put(b, "y")
    old_store(tmp_path / "old.sqlite")
    info = store_info(shards)
    assert info.shards == 2 and info.responses == 4 and len(info.writers) == 2
    with pytest.raises(Exception, match="a job is writing"):
        prune(shards, models=["openai/m"])  # a shard has one writer: its job
    a.close()
    b.close()
    out = tmp_path / "merged.sqlite"
    assert main(["merge", str(shards), str(tmp_path / "old.sqlite"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 duplicate(s), 1 with a different answer" in printed and "4 in all" in printed
    merged = RequestStore(out, read_only=True)
    assert len(merged) == 4 and merged.get(*key_of("both")).text == "answer to both"  # first shard wins
    assert merged.spend(JOB_A) == pytest.approx(0.02) and merged.spend() == pytest.approx(0.28)
    merged.close()
    assert merge([shards], out)["added"] == 0  # merging again adds nothing
    assert main(["--path", str(shards), "info"]) == 0
    assert "4 stored response(s) in 2 shard(s)" in capsys.readouterr().out
    assert prune(shards, models=["openai/m"])["deleted"] == 4
    assert store_info(shards).responses == 0
    assert main(["merge", str(out), "--out", str(out)]) == 2  # nothing else to merge


def test_client_with_store_dir_replays_other_jobs_and_reruns_send_nothing(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TRUSTSIM_TEST_KEY", "k")
    shards = tmp_path / "shards"
    llm = llm_dict(tmp_path / "unused.sqlite", store_dir=str(shards))

    def ask(job: str, texts: list[str]) -> dict:
        client = client_of(model_dict(fake_server.api_base), llm, job=job)

        async def go() -> dict:
            for text in texts:
                await client.complete(ChatRequest("fake", [{"role": "user", "content": text}]))
            stats = client.stats()
            await client.aclose()
            return stats

        return asyncio.run(go())

    assert ask(JOB_A, ["p", "q"])["calls_sent"] == 2
    assert ask(JOB_A, ["p", "q"])["calls_sent"] == 0  # the re-run replays its own shard
    stats = ask(JOB_B, ["q", "r"])  # another job replays 'q' from A's shard, sends only 'r'
    assert stats["calls_sent"] == 1 and stats["cache_hits"] == 1
    assert len(fake_server.requests) == 3 and not (tmp_path / "unused.sqlite").exists()
    replay = client_of(model_dict(fake_server.api_base), {**llm, "replay_only": True}, job=JOB_C)
    assert replay.store is not None and not list(shards.glob(f"{JOB_C[:16]}*"))  # replay writes nothing
    asyncio.run(replay.aclose())
    with pytest.raises(StoreError, match=r"llm\.store_dir"):
        client_of(
            model_dict(fake_server.api_base),
            {**llm, "store_dir": str(tmp_path / "none"), "replay_only": True},
        )


def test_other_shards_do_not_hold_open_files(tmp_path: Path) -> None:
    """A sweep of thousands of jobs must not run a job out of file descriptors: other shards are closed
    once their keys are read (kept open only when the job replays from them)."""
    for job in range(40):
        s = RequestStore(tmp_path / f"s{job:03d}.sqlite", journal="delete")
        put(s, f"q{job}")
        s.close()
    fds = len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else None
    store = ShardedStore(tmp_path, job=JOB_A)
    assert store.get(*key_of("q7")) is not None and store.get(*key_of("nothing")) is None
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) - fds <= 4  # own shard, its claim, the one replayed from
    store.close()
