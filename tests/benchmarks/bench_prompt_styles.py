"""Request sizes of the two escape-room prompt styles (docs/prompts.md), on the same 11-game mid2strike run.

    python tests/benchmarks/bench_prompt_styles.py

The reference style plays against the fake OpenAI server with the scripted model of
tests/reference_prompt/policy.py; the trustsim style with a JSON model that verifies Q4 in round 1 and then
volunteers with the owners' capsules (same schedule, seed and puzzles). Prints characters per
decision request (mean, max) and a token estimate (chars / 4): the reference transcript grows to the
12,000-character window and is re-read every round, which is why the embedded model pins the trustsim style.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.reference_prompt.policy import reply  # noqa: E402
from trustsim.llm.fake_server import FakeServer  # noqa: E402


def json_reply(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if "Your move, as JSON" not in text:
        return '{"answer": 1}'
    if "round 1 of" in text:
        return '{"action": "verify", "target": 4, "confidence": {"Q1": 0.9, "Q2": 0.9, "Q3": 0.9, "Q4": 0.5}}'
    labels = {f"Q{k}": f"Q{k}-{s}" for k, s in zip((1, 2, 3, 4), "ABCD", strict=True)}
    return json.dumps({"action": "volunteer", "password": labels, "reasoning": "owners"})


def sizes(style: str) -> list[int]:
    answer = reply if style == "reference" else json_reply
    with tempfile.TemporaryDirectory() as tmp, FakeServer(reply=answer) as srv:
        cmd = [
            sys.executable, "-m", "trustsim", "+experiment=mid2strike", "agent=llm", "model=openai_compatible",
            f"model.api_base={srv.api_base}", f"agent.prompt={style}", f"llm.store_path={tmp}/s.sqlite",
            f"hydra.run.dir={tmp}/run",
        ]  # fmt: skip
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        subprocess.run(cmd, check=True, cwd=ROOT, env=env, capture_output=True)
        return [
            sum(len(m["content"]) for m in r["messages"])
            for r in srv.requests
            if "You are Player" in r["messages"][-1]["content"]
            or "Your move, as JSON" in r["messages"][-1]["content"]
        ]


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print("style     decisions  mean chars  max chars  ~mean tokens  ~max tokens")
    for style in ("reference", "trustsim"):
        s = sizes(style)
        mean = statistics.fmean(s)
        print(f"{style:9} {len(s):9}  {mean:10.0f}  {max(s):9}  {mean / 4:12.0f}  {max(s) / 4:11.0f}")


if __name__ == "__main__":
    main()
