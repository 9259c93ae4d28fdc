"""Drills: a damaged, emptied or foreign request store, made in the test, against the project's fault server.

- Random pages overwritten in the middle of the store: the run stops at start (exit 2) naming the file,
  ``llm.store_path`` and ``python -m trustsim.store_cli ... recover``; 0 requests sent; ``trustsim.store_cli info`` says
  the same in one line. ``recover`` copies every readable answer into a new store; the same command on it
  sends only the requests whose answers were lost, and gives the same tables.
- The store truncated to 0 bytes, or replaced by a foreign file: exit 2 naming it, 0 requests sent, the file
  left as it is (never re-created).
- A damaged shard in ``llm.store_dir``: exit 2 naming the shard and ``llm.store_dir``, 0 requests sent.
- ``trustsim.store_cli info/prune/merge/recover`` on every kind of bad store: one line, exit 2, no traceback.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim.llm.fake_server import FakeServer
from trustsim.llm.store import RequestStore
from trustsim.store_cli.__main__ import main as store_main

from .helpers import REPO, TABLES, TRACEBACK, cli_env, llm_overrides, manifest, run_cli

PAGE = 4096


def corrupt_pages(path: Path, pages: list[int], seed: int = 5) -> None:
    """Overwrite whole pages of a SQLite file with random bytes (a torn disk, a bad copy)."""
    rng = random.Random(seed)
    with path.open("r+b") as f:
        for page in pages:
            f.seek(page * PAGE)
            f.write(bytes(rng.getrandbits(8) for _ in range(PAGE)))


def rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        conn.close()


def store_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trustsim.store_cli", *args],
        capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def server():
    """One fault server for the module: requests are keyed by its address, so a re-run must reach the same."""
    with FakeServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, server):
    """One clean LLM run (2 games) and its store, copied by each drill before it damages the copy."""
    tmp = tmp_path_factory.mktemp("store_damage")
    store = tmp / "clean.sqlite"
    before = len(server.requests)
    done = run_cli([*llm_overrides(server.api_base, store), f"hydra.run.dir={tmp / 'first'}"], tmp)
    sent = len(server.requests) - before
    assert done.returncode == 0, done.stderr[-2000:]
    assert sent == rows(store) > 10
    return {"tmp": tmp, "store": store, "run": tmp / "first", "requests": sent}


def _copy(first_run, name: str) -> Path:
    path = first_run["tmp"] / name
    shutil.copyfile(first_run["store"], path)
    return path


@pytest.mark.slow
def test_a_damaged_store_is_refused_then_recovered(first_run, server, tmp_path) -> None:
    store = _copy(first_run, "damaged.sqlite")
    pages = store.stat().st_size // PAGE
    corrupt_pages(store, [pages // 3, pages // 3 + 1, pages // 2])
    args = llm_overrides(server.api_base, store)
    before = len(server.requests)
    refused = run_cli([*args, f"hydra.run.dir={tmp_path / 'refused'}"], tmp_path)
    assert len(server.requests) == before  # nothing bought again
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert (
        "llm.store_path" in refused.stderr and str(store) in refused.stderr and "is damaged" in refused.stderr
    )
    assert f"python -m trustsim.store_cli --path {store} recover" in refused.stderr
    assert TRACEBACK not in refused.stderr and "re-run the same command to resume" not in refused.stderr
    failure = manifest(tmp_path / "refused")["failure"]
    assert "llm.store_path" in failure["reason"] and "recover" in failure["resume"]

    info = store_cli("--path", str(store), "info")
    assert info.returncode == 2 and TRACEBACK not in info.stderr and "recover" in info.stderr
    assert len(info.stderr.strip().splitlines()) == 1

    recovered = tmp_path / "recovered.sqlite"
    done = store_cli("--path", str(store), "recover", "--out", str(recovered))
    assert done.returncode == 0, done.stderr
    kept = rows(recovered)
    assert 0 < kept < first_run["requests"]  # what the damaged pages held is lost, the rest is kept
    assert f"recovered {kept} response(s)" in done.stdout
    before = len(server.requests)
    again = run_cli(
        [*llm_overrides(server.api_base, recovered), f"hydra.run.dir={tmp_path / 'again'}"], tmp_path
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert (
        len(server.requests) - before == first_run["requests"] - kept
    )  # only the lost answers, bought again
    for table in TABLES:
        assert (tmp_path / "again" / table).read_bytes() == (first_run["run"] / table).read_bytes(), table


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("empty", "exists but is empty (0 bytes)"),
        ("foreign", "is not a request store (not a SQLite database)"),
        ("other_database", "is a SQLite database but not a request store"),
    ],
)
def test_an_emptied_or_foreign_store_is_refused_not_recreated(
    first_run, server, tmp_path, damage, says
) -> None:
    store = _copy(first_run, f"{damage}.sqlite")
    if damage == "empty":
        store.write_bytes(b"")
    elif damage == "foreign":
        store.write_text("a spreadsheet, not a store\n" * 100)
    else:
        store.unlink()
        conn = sqlite3.connect(store)
        conn.execute("CREATE TABLE notes (x)")
        conn.commit()
        conn.close()
    before = store.read_bytes()
    with FakeServer() as server:
        done = run_cli(
            [*llm_overrides(server.api_base, store), f"hydra.run.dir={tmp_path / 'run'}"], tmp_path
        )
        assert len(server.requests) == 0
    assert done.returncode == 2 and says in done.stderr and str(store) in done.stderr, done.stderr[-2000:]
    assert "llm.store_path" in done.stderr and TRACEBACK not in done.stderr
    assert store.read_bytes() == before  # left as it was: never re-created


@pytest.mark.slow
def test_damaged_and_emptied_shards_are_refused(server, tmp_path) -> None:
    """``llm.store_dir``: the job's own shard damaged (the same command again), another job's shard emptied or
    foreign, and with ``llm.store_check=full`` another job's damaged shard: exit 2 naming the shard and
    ``llm.store_dir``, nothing sent."""
    shards = tmp_path / "shards"

    def job(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
        args = [
            *llm_overrides(server.api_base, tmp_path / "unused.sqlite", *extra),
            f"llm.store_dir={shards}",
        ]
        return run_cli([*args, f"hydra.run.dir={tmp_path / name}"], tmp_path)

    assert job("first").returncode == 0
    (shard,) = shards.glob("*.sqlite")
    corrupt_pages(shard, [2, 3, 4])
    sent = len(server.requests)
    own = job("own")  # the same command: its own shard is damaged
    full = job("full", "seed=1", "llm.store_check=full")  # another job, every shard checked in full
    shutil.move(shard, tmp_path / "aside.sqlite")
    (shards / "emptied.sqlite").write_bytes(b"")
    emptied = job("emptied", "seed=2")  # another job meets a shard emptied with no writer
    (shards / "emptied.sqlite").write_text("not a store")
    foreign = job("foreign", "seed=3")
    assert len(server.requests) == sent
    for done, path in ((own, shard), (full, shard), (emptied, shards / "emptied.sqlite"),
                       (foreign, shards / "emptied.sqlite")):  # fmt: skip
        assert done.returncode == 2, done.stderr[-2000:]
        assert "llm.store_dir" in done.stderr and str(path) in done.stderr and TRACEBACK not in done.stderr
    assert "recover" in own.stderr and "mv " in own.stderr  # the shard's advice: recover, move it aside


def test_store_commands_never_print_a_traceback(first_run, tmp_path, capsys) -> None:
    """In-process (the ``main`` of ``python -m trustsim.store_cli``; the damaged-store drill also runs it as a real
    process): every command on every kind of bad store is one line on stderr and exit code 2."""
    damaged = _copy(first_run, "cmd_damaged.sqlite")
    corrupt_pages(damaged, [3, 4, 5])
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_text("not a store")
    folder = tmp_path / "dir"
    folder.mkdir()
    shutil.copyfile(damaged, folder / "a.sqlite")
    RequestStore(tmp_path / "ok.sqlite").close()
    for path in (damaged, empty, foreign, folder, tmp_path / "missing.sqlite"):
        for command in (["info"], ["prune", "--model", "x"], ["merge", str(path), "--out", str(tmp_path / "m.sqlite")],
                        ["recover", "--out", str(tmp_path / "r.sqlite")]):  # fmt: skip
            if command[0] == "recover" and path == damaged:
                continue  # recovers (the drill above)
            target = tmp_path / "ok.sqlite" if command[0] == "merge" else path
            code = store_main(["--path", str(target), *command])
            out = capsys.readouterr()
            assert code == 2 and TRACEBACK not in out.out + out.err, (path.name, command, out)
            assert len(out.err.strip().splitlines()) == 1 and out.err.startswith("trustsim.store_cli: "), (
                out.err
            )


def test_a_full_check_is_an_option(first_run, tmp_path) -> None:
    store = _copy(first_run, "full.sqlite")
    with pytest.raises(Exception, match="expected one of quick, full"):
        from trustsim.llm.config import parse_llm_config

        parse_llm_config({"store_check": "thorough"})
    RequestStore(store, check="full").close()  # a sound store passes PRAGMA integrity_check
    corrupt_pages(store, [store.stat().st_size // PAGE // 2])
    from trustsim.llm.store import StoreDamaged

    for check in ("quick", "full"):
        with pytest.raises(StoreDamaged, match="is damaged"):
            RequestStore(store, check=check)
