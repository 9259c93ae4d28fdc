"""A default study preset run with an LLM agent asks what the study asked (issue 18's acceptance run)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.reference_prompt.policy import reply
from trustsim.llm.fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[2]


def test_mid2strike_llm_run_sends_reference_requests(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with FakeServer(reply=reply) as srv:
        cmd = [
            sys.executable,
            "-m",
            "trustsim",
            "+experiment=mid2strike",
            "agent=llm",
            "model=openai_compatible",
            f"model.api_base={srv.api_base}",
            "game.games=5",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
            f"hydra.run.dir={tmp_path / 'run'}",
        ]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        requests = list(srv.requests)
    decisions = [r for r in requests if "You are Player" in r["messages"][0]["content"]]
    assert len(decisions) >= 15
    announced = 0
    for body in requests:
        assert [m["role"] for m in body["messages"]] == ["user"]  # one user message, no system prompt
        assert "response_format" not in body
    for body in decisions:
        text = body["messages"][0]["content"]
        assert "DECISION: [Your action here" in text and "REASONING: [Your reasoning" in text
        assert "confidence" not in text.lower()
        assert "D Pass" not in text and "D: Pass" not in text
        announced += text.count("announcement: ")
    assert announced > 0  # announcements were there, without passes
    with (tmp_path / "run" / "decisions.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["prompt"] for r in rows} == {"reference"}  # the prompt style is a cell key
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["cell"]["prompt"] == "reference"
    # As the study, the model solves its own puzzle (once per seat and game) and each verification, with the
    # study's own-answer and verifier prompts (game.own_answer / game.verifier auto -> llm).
    game = manifest["config"]["game"]
    assert (game["own_answer"], game["verifier"]) == ("llm", "llm")
    own = [r for r in requests if r["messages"][0]["content"].startswith("You are given a puzzle to solve.")]
    checks = [
        r for r in requests if r["messages"][0]["content"].startswith("You are verifying another player")
    ]
    verifications = sum(r["seat"] != "D" and r["resolved_action"] == "verify" for r in rows)
    assert len(own) == 5 * 3 and len(checks) == verifications > 0
    assert len(requests) == len(decisions) + len(own) + len(checks)
