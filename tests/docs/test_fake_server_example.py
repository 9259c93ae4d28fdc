"""docs/llm.md's command that plays against the loopback fake server works as written: every answer valid,
no weak-model label (the doc-command test skips it, since it needs the server running)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.test_doc_commands import REPO, extract_commands
from trustsim.llm.fake_server import FakeServer

DOC_BASE = "http://127.0.0.1:8765/v1"


@pytest.mark.slow
def test_the_documented_fake_server_run_has_only_valid_answers(tmp_path: Path) -> None:
    (cmd,) = [
        c.text
        for c in extract_commands(REPO / "docs" / "llm.md")
        if "model=openai_compatible" in c.text and DOC_BASE in c.text
    ]
    with FakeServer() as server:
        args = shlex.split(cmd.replace(DOC_BASE, server.api_base))
        assert args[:3] == ["python", "-m", "trustsim"]
        proc = subprocess.run(
            [sys.executable, *args[1:], f"hydra.run.dir={tmp_path / 'run'}",
             f"llm.store_path={tmp_path / 'store.sqlite'}", "progress=false"],
            cwd=REPO,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            capture_output=True,
            text=True,
            timeout=600,
        )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "WEAK MODEL" not in out
    assert "invalid answers: 0 of " in out, out[-3000:]
