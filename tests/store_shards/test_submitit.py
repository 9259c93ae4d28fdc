"""A sweep under ``hydra/launcher=submitit_local`` with several workers sharing one ``llm.store_dir``."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.helpers import REPO
from trustsim.llm.fake_server import FakeServer
from trustsim.store_cli import merge, store_info

SEEDS = (0, 1, 2)
LOCK_ERRORS = (
    "database is locked",
    "database table is locked",
    "OperationalError",
    "disk I/O error",
    "malformed",
)


def sweep(server: FakeServer, shards: Path, out: Path) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable, "-m", "trustsim", "-m", "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10",
        "+experiment=mid2strike", "agent=llm", "model=openai_compatible", f"model.api_base={server.api_base}",
        "model.litellm_model=openai/fake-model", "model.api_key_env=null", "game.games=2",
        f"seed={','.join(map(str, SEEDS))}", f"llm.store_dir={shards}", f"hydra.sweep.dir={out}", "progress=false",
    ]  # fmt: skip
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=900)


def job_logs(out: Path) -> str:
    """Every job's submitit stdout/stderr."""
    return "\n".join(p.read_text(errors="replace") for p in sorted((out / ".submitit").rglob("*_log.*")))


@pytest.mark.slow  # ~70 s on 2 busy cores: three jobs start Python + litellm in parallel
def test_submitit_local_workers_share_a_store_dir_then_a_rerun_sends_nothing(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    with FakeServer() as server:
        first = sweep(server, shards, tmp_path / "sweep1")
        assert first.returncode == 0, first.stderr[-3000:]
        sent = len(server.requests)
        manifests = [json.loads(p.read_text()) for p in sorted((tmp_path / "sweep1").glob("*/manifest.json"))]
        assert [m["status"] for m in manifests] == ["complete"] * len(SEEDS)
        spans = sorted((m["timings"]["started"], m["timings"]["finished"]) for m in manifests)
        assert any(b[0] < a[1] for a, b in itertools.pairwise(spans))  # the workers overlapped
        assert sum(m["llm"]["calls_sent"] for m in manifests) == sent > 0
        logs = job_logs(tmp_path / "sweep1") + first.stderr
        assert logs.strip() and not [e for e in LOCK_ERRORS if e in logs]  # 0 lock errors
        assert len(list(shards.glob("*.sqlite"))) == len(SEEDS)  # one shard per job, named by its hash
        assert {m["config_hash"][:16] + ".sqlite" for m in manifests} == {
            p.name for p in shards.glob("*.sqlite")
        }
        assert not list(shards.glob("*-wal")) and not list(shards.glob("*.writer"))  # no WAL; claims released
        assert store_info(shards).responses == sent

        again = sweep(server, shards, tmp_path / "sweep2")
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(server.requests) == sent  # the re-run sends 0 requests: every answer replays
        replays = [json.loads(p.read_text()) for p in sorted((tmp_path / "sweep2").glob("*/manifest.json"))]
        assert [m["llm"]["calls_sent"] for m in replays] == [0] * len(SEEDS)
        for a, b in zip(manifests, replays, strict=True):
            run1, run2 = Path(a["run_dir"]), Path(b["run_dir"])
            assert (run1 / "decisions.csv").read_bytes() == (run2 / "decisions.csv").read_bytes()
        assert not [e for e in LOCK_ERRORS if e in job_logs(tmp_path / "sweep2")]
    merged = merge([shards], tmp_path / "merged.sqlite")
    assert merged["responses"] == sent and sum(s["conflicts"] for s in merged["sources"]) == 0
