"""``python -m trustsim.store_cli``: info and prune on a store written by the real client (litellm mock_response)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import trustsim.llm.store as llm_store
from tests.llm.helpers import REPO, client_of, llm_dict, read_only
from trustsim.llm import ChatRequest
from trustsim.store_cli import prune, store_info
from trustsim.store_cli.__main__ import main

DAY = 86400.0
OLD = time.time() - 40 * DAY


def fill(store: Path, name: str, litellm_model: str, texts: list[str]) -> None:
    model = {"name": name, "litellm_model": litellm_model, "params": {"mock_response": '{"action": "pass"}'}}
    client = client_of(model, llm_dict(store))

    async def go() -> None:
        for text in texts:
            await client.complete(ChatRequest(name, [{"role": "user", "content": text}]))
        await client.aclose()

    asyncio.run(go())


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """3 gpt-4o answers stored 40 days ago, 2 gpt-4o and 2 gpt-4o-mini answers stored now."""
    path = tmp_path / "store.sqlite"
    with monkeypatch.context() as m:
        m.setattr(llm_store, "time", types.SimpleNamespace(time=lambda: OLD))
        fill(path, "gpt-4o", "openai/gpt-4o", ["a", "b", "c"])
    fill(path, "gpt-4o", "openai/gpt-4o", ["d", "e"])
    fill(path, "gpt-4o-mini", "openai/gpt-4o-mini", ["f", "g"])
    return path


def models(path: Path) -> dict[str, int]:
    return {row["model"]: row["responses"] for row in store_info(path).by_model}


def test_info_counts_by_model_and_date(store: Path, capsys) -> None:
    info = store_info(store)
    assert info.responses == 7 and info.bytes >= store.stat().st_size > 0
    by_model = {r["model"]: r for r in info.by_model}
    assert {m: r["responses"] for m, r in by_model.items()} == {"openai/gpt-4o": 5, "openai/gpt-4o-mini": 2}
    with sqlite3.connect(store) as conn:  # the sums are the table's
        cost, tokens = conn.execute(
            "SELECT SUM(cost_usd), SUM(prompt_tokens) FROM responses WHERE model='openai/gpt-4o'"
        ).fetchone()
    assert by_model["openai/gpt-4o"]["cost_usd"] == pytest.approx(cost) and cost > 0
    assert by_model["openai/gpt-4o"]["prompt_tokens"] == tokens > 0
    assert [r["responses"] for r in info.by_date] == [3, 4]  # 40 days ago, today
    assert main(["--path", str(store), "info"]) == 0
    out = capsys.readouterr().out
    assert "7 stored response(s)" in out and "openai/gpt-4o-mini  2" in out and "by date" in out


def test_prune_by_model_dry_run_then_real(store: Path, capsys) -> None:
    assert main(["--path", str(store), "prune", "--model", "openai/gpt-4o-mini", "--dry-run"]) == 0
    assert "would delete 2 response(s)" in capsys.readouterr().out
    assert models(store) == {"openai/gpt-4o": 5, "openai/gpt-4o-mini": 2}  # nothing deleted
    assert main(["--path", str(store), "prune", "--model", "openai/gpt-4o-mini", "--vacuum"]) == 0
    assert "deleted 2 response(s)" in capsys.readouterr().out
    assert models(store) == {"openai/gpt-4o": 5}


def test_prune_by_age_and_model_and_replay_after(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert prune(store, older_than_days=30, models=["openai/gpt-4o-mini"])["deleted"] == 0  # both must match
    result = prune(store, older_than_days=30)
    assert result["deleted"] == 3 and result["matched"][0]["model"] == "openai/gpt-4o"
    assert models(store) == {"openai/gpt-4o": 2, "openai/gpt-4o-mini": 2}
    # the store still works for the client: kept answers replay, pruned ones are asked again
    model = {
        "name": "gpt-4o",
        "litellm_model": "openai/gpt-4o",
        "params": {"mock_response": '{"action": "pass"}'},
    }
    client = client_of(model, llm_dict(store))

    async def go() -> dict:
        for text in ["a", "d"]:
            await client.complete(ChatRequest("gpt-4o", [{"role": "user", "content": text}]))
        stats = client.stats()
        await client.aclose()
        return stats

    stats = asyncio.run(go())
    assert stats["calls_sent"] == 1 and stats["cache_hits"] == 1


def test_prune_errors(store: Path, tmp_path: Path, capsys) -> None:
    assert main(["--path", str(store), "prune"]) == 2
    assert "needs --model and/or --older-than" in capsys.readouterr().err
    assert main(["--path", str(tmp_path / "none.sqlite"), "info"]) == 2
    assert "no request store at" in capsys.readouterr().err
    (tmp_path / "junk.sqlite").write_text("not a database")
    assert main(["--path", str(tmp_path / "junk.sqlite"), "info"]) == 2
    assert "junk.sqlite is not a request store (not a SQLite database)" in capsys.readouterr().err
    assert main(["--path", str(store), "prune", "--model", "openai/nope"]) == 0
    assert "no stored response of model 'openai/nope'" in capsys.readouterr().err


def test_read_only_store_refuses_prune(store: Path) -> None:
    folder = store.parent
    with read_only(folder) as prefix:
        code = "from trustsim.store_cli.__main__ import main; import sys; sys.exit(main(sys.argv[1:]))"
        base = [*prefix, sys.executable, "-c", code, "--path", str(store)]
        env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        pruned = subprocess.run([*base, "prune", "--model", "openai/gpt-4o"], capture_output=True, text=True,
                                cwd=REPO, env=env, timeout=120)  # fmt: skip
        info = subprocess.run(
            [*base, "--json", "info"], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
        )
    assert pruned.returncode == 2 and "read-only" in pruned.stderr and "Traceback" not in pruned.stderr
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["responses"] == 7
    assert models(store)["openai/gpt-4o"] == 5  # nothing deleted
