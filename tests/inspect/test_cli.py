"""The commands of docs/inspect.md, as a user types them: ``inspect eval`` in a subprocess, then
``python -m analysis from-inspect``; the trust-card battery against the loopback server, then the card."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO
from tests.inspect.conftest import eval_task, inspect_service, read_log, run_files
from trustsim.llm.fake_server import FakeServer

INSPECT = str(Path(sys.executable).with_name("inspect"))


def _run(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, timeout=900, env={**os.environ, **env}
    )


@pytest.mark.slow
def test_inspect_eval_mid2strike_then_from_inspect(tmp_path):
    """``inspect eval trustsim/escape_room -T experiment=mid2strike --model mockllm/model``: 11 games' model
    calls and scores in the log; from-inspect makes it a run directory with 11 games."""
    logs = tmp_path / "logs"
    proc = _run(INSPECT, "eval", "trustsim/escape_room", "-T", "experiment=mid2strike", "--model", "mockllm/model",
                "--log-dir", str(logs), "--display", "none")  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (path,) = logs.glob("*.eval")
    log = read_log(path)
    (sample,) = log.samples
    manifest = json.loads(run_files(sample)["manifest.json"])
    calls = [e for e in sample.events if e.event == "model"]
    assert manifest["counts"]["games"] == 11 and len(calls) == manifest["llm"]["calls_sent"] > 0
    assert {"volume", "escape_rate"} <= set(sample.scores["trustsim_scorer"].value)
    out = tmp_path / "runs"
    conv = _run(sys.executable, "-m", "analysis", "from-inspect", str(logs), "--out", str(out))
    assert conv.returncode == 0, conv.stderr[-2000:]
    (games,) = out.rglob("games.csv")
    assert len(pd.read_csv(games)) == 11


@pytest.mark.slow
def test_trust_card_against_the_loopback_server_then_the_card(tmp_path, monkeypatch):
    """``inspect eval trustsim/trust_card -T size=smoke --model openai-api/...`` completes; the card is built
    from its run directories."""
    from tests.card.conftest import schema_reply

    with FakeServer(reply=schema_reply) as server:
        model = inspect_service(monkeypatch, "card", server)
        log = eval_task("trust_card", tmp_path / "logs", model=model,
                        task_args={"size": "smoke", "model_preset": "vllm", "overrides": ["agent.prompt=trustsim"]})  # fmt: skip
    assert all(s.error is None for s in log.samples) and len(log.samples) == 13
    parts = {s.metadata["part"] for s in log.samples}
    assert len(parts) == 11
    out = tmp_path / "runs"
    assert (
        _run(sys.executable, "-m", "analysis", "from-inspect", log.location, "--out", str(out)).returncode
        == 0
    )
    card = _run(
        sys.executable, "-m", "analysis", "card", str(out), "--out", str(tmp_path / "card"), "--no-figures"
    )
    assert card.returncode == 0, card.stderr[-2000:]
    table = pd.read_csv(tmp_path / "card" / "cards.csv")
    assert len(table) == 1 and "fake-model" in str(table.iloc[0].tolist())
    assert list((tmp_path / "card").glob("card_*.html"))
    reliance = next(s for s in log.samples if s.metadata["part"] == "reliance")
    stages = pd.read_csv(io.StringIO(run_files(reliance)["stages.csv"]))
    assert set(stages["model"]) == {model}
