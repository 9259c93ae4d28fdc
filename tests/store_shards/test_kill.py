"""A job killed (``kill -9``) while it writes its shard: the re-run takes its shard back and resends nothing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.llm.helpers import REPO
from trustsim.llm.fake_server import FakeServer
from trustsim.llm.store import LOCK_SUFFIX


def stored(shards: Path) -> set[str]:
    out: set[str] = set()
    for shard in shards.glob("*.sqlite"):
        with sqlite3.connect(f"{shard.resolve().as_uri()}?mode=ro", uri=True) as conn:
            out |= {
                json.dumps(json.loads(r)["messages"], sort_keys=True)
                for (r,) in conn.execute("SELECT request FROM responses")
            }
    return out


@pytest.mark.slow
def test_kill_minus_9_then_rerun_takes_the_shard_back_and_resends_nothing(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with FakeServer(delay_s=0.05) as server:
        args = [
            sys.executable, "-m", "trustsim", "+experiment=mid2strike", "agent=llm", "model=openai_compatible",
            f"model.api_base={server.api_base}", "model.litellm_model=openai/fake-model", "model.api_key_env=null",
            f"llm.store_dir={shards}", "progress=false",
        ]  # fmt: skip
        proc = subprocess.Popen([*args, f"hydra.run.dir={tmp_path / 'killed'}"], cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.time() + 120
        while time.time() < deadline and len(stored(shards) if shards.is_dir() else ()) < 12:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        before = stored(shards)
        sent_before = len(server.requests)
        claims = list(shards.glob(f"*{LOCK_SUFFIX}"))
        assert 12 <= len(before) < 100 and len(claims) == 1  # killed mid-run, its claim left behind
        done = subprocess.run([*args, f"hydra.run.dir={tmp_path / 'resumed'}"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        resent = {json.dumps(r["messages"], sort_keys=True) for r in server.requests[sent_before:]}
    assert resent and not (resent & before)  # nothing stored was sent again
    assert [p.name for p in shards.glob("*.sqlite")] == [claims[0].name[: -len(LOCK_SUFFIX)]]  # same shard
    assert not list(shards.glob(f"*{LOCK_SUFFIX}"))
    manifest = json.loads((tmp_path / "resumed" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["llm"]["cache_hits"] >= len(before)
