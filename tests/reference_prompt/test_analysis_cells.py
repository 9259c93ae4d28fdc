"""The prompt style is a cell key: the trust analysis keeps reference and trustsim runs apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.escape_room.pipeline import analyse
from tests.reference_prompt.policy import reply
from trustsim.llm.fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[2]


def json_or_reference(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if "Your move, as JSON" in text:
        return '{"action": "verify", "target": 4}' if "round 1 of" in text else '{"action": "pass"}'
    return reply(body) if "You are Player" in text or "Your answer (just" in text else '{"answer": 1}'


@pytest.mark.slow
def test_runs_of_the_two_styles_are_separate_cells(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    runs = []
    with FakeServer(reply=json_or_reference) as srv:
        for style in ("reference", "trustsim"):
            run = tmp_path / style
            cmd = [
                sys.executable, "-m", "trustsim", "+experiment=mid2strike", "agent=llm", "model=openai_compatible",
                f"model.api_base={srv.api_base}", f"agent.prompt={style}", "game.games=2",
                f"llm.store_path={tmp_path / 'store.sqlite'}", f"hydra.run.dir={run}",
            ]  # fmt: skip
            done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            assert json.loads((run / "manifest.json").read_text())["cell"]["prompt"] == style
            runs.append(run)
    result = analyse([str(r) for r in runs], n_resamples=50)
    cells = {c.keys["prompt"]: c.keys for c in result.cells}
    assert set(cells) == {"reference", "trustsim"}
    same = {k: v for k, v in cells["reference"].items() if k != "prompt"}
    assert same == {k: v for k, v in cells["trustsim"].items() if k != "prompt"}  # only the style differs
