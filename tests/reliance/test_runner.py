"""The reliance game through the engine: oracle = 100%, shared feedback draws, pairs, support, LLM path."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_in_process


@pytest.fixture(scope="module")
def oracle_all(tmp_path_factory):
    run = tmp_path_factory.mktemp("oracle") / "run"
    code = run_in_process(["+experiment=reliance", "game.set=all", "progress=false"], run)
    assert code == 0, (run / "manifest.json").read_text()
    return run


def _events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def test_oracle_scores_100_percent_on_every_scenario(oracle_all, lib):
    stages = pd.read_csv(oracle_all / "stages.csv")
    scen = pd.read_csv(oracle_all / "scenarios.csv")
    assert len(scen) == len(lib.main) + len(lib.specialised)
    assert stages["valid"].all() and stages["optimal"].all()
    assert scen["all_optimal"].all() and (scen["stages_reached"] == 3).all()
    ranged = stages["value_range"] > 1e-9
    assert (stages.loc[ranged, "regret"] == 0).all()
    assert stages.loc[~ranged, "regret"].isna().all()
    manifest = json.loads((oracle_all / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["game"] == "reliance"
    assert manifest["counts"]["decisions"] == len(stages)


def test_predictions_follow_the_calibration_contract(oracle_all):
    preds = pd.read_csv(oracle_all / "predictions.csv")
    expected = ["run_id", "game_type", "cluster", "model", "agent", "memory", "schedule", "subject",
                "subject_kind", "game", "round", "p", "outcome", "p_exact", "source", "item"]  # fmt: skip
    assert list(preds.columns) == expected
    assert (preds["game_type"] == "reliance").all() and (preds["cluster"] == "s0").all()
    assert preds["outcome"].isin([0, 1]).all()
    assert (preds["p"] == preds["p_exact"]).all()  # the oracle states the exact posterior probability
    # the realised outcomes are draws from the exact probabilities: mean outcome ≈ mean p_exact
    se = (preds["p_exact"] * (1 - preds["p_exact"])).sum() ** 0.5 / len(preds)
    assert abs(preds["outcome"].mean() - preds["p_exact"].mean()) < 4 * se


def test_events_record_every_stage(oracle_all):
    events = _events(oracle_all)
    assert [e["seq"] for e in events] == list(range(len(events)))
    stage_events = [e for e in events if e["type"] == "stage"]
    assert len(stage_events) == len(pd.read_csv(oracle_all / "stages.csv"))
    assert {"scenario_start", "scenario_end", "run_start", "run_end", "library"} <= {
        e["type"] for e in events
    }
    library = next(e for e in events if e["type"] == "library")
    assert library["all_pass"] and library["counts"]["main"] >= 300


def test_shared_feedback_draws_across_agents(run_job_dir, oracle_all):
    code, myopic = run_job_dir(
        ["+experiment=reliance", "agent=myopic", "game.set=all", "progress=false"], "myopic"
    )
    assert code == 0
    a = pd.read_csv(oracle_all / "stages.csv")
    b = pd.read_csv(myopic / "stages.csv")
    assert 0 < b["optimal"].mean() < 1  # myopic deviates where learning pays
    assert not b.loc[b["learning_pays"], "optimal"].any()
    keys = ["scenario", "history", "action"]
    joined = a.merge(b, on=keys, suffixes=("_o", "_m"))
    assert len(joined) > 500
    assert (joined["observation_o"] == joined["observation_m"]).all()
    assert (joined["cost_o"] == joined["cost_m"]).all()


def test_runs_are_deterministic_and_random_agent_is_seeded(run_job_dir):
    over = [
        "+experiment=reliance",
        "agent=random",
        "game.processes=[delayed,replacement]",
        "game.limit=40",
        "progress=false",
    ]
    code1, r1 = run_job_dir(over, "r1")
    code2, r2 = run_job_dir(over, "r2")
    assert code1 == code2 == 0
    assert (r1 / "stages.csv").read_text() == (r2 / "stages.csv").read_text()
    stages = pd.read_csv(r1 / "stages.csv")
    assert stages["valid"].all() and 0 < stages["optimal"].mean() < 1
    assert set(stages["process"]) == {"delayed", "replacement"}


def test_pairs_preset(run_job_dir, lib):
    code, run = run_job_dir(["+experiment=reliance_pairs", "progress=false"], "pairs")
    assert code == 0
    stages = pd.read_csv(run / "stages.csv")
    assert len(stages) == 2 * len(lib.pairs)
    assert stages["optimal"].all()
    for pair_id, g in stages.groupby("pair"):
        pair = next(p for p in lib.pairs if p.id == pair_id)
        assert set(g["pair_side"]) == {"a", "b"}
        assert (g["stage"] == pair.stage).all()
        same = g["action"].nunique() == 1
        assert same == pair.stable


def test_support_preset_shows_the_posterior(run_job_dir, lib):
    code, run = run_job_dir(["+experiment=reliance_support", "progress=false"], "support")
    assert code == 0
    scen = pd.read_csv(run / "scenarios.csv")
    assert list(scen["scenario"]) == lib.support
    assert scen["show_posterior"].all()


def test_llm_agent_through_litellm_mock(run_job_dir, tmp_path: Path):
    reply = json.dumps({"action": "backup", "confidence": 0.8, "reasoning": "safe"})
    over = [
        "+experiment=reliance",
        "agent=llm",
        "game.processes=[repeated,improvement]",
        "game.limit=4",
        "model.name=mock",
        "model=scripted",
        "+model.litellm_model=openai/mock-model",
        f"+model.params.mock_response='{reply}'",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "progress=false",
    ]
    code, run = run_job_dir(over)
    assert code == 0, (run / "manifest.json").read_text()
    stages = pd.read_csv(run / "stages.csv")
    scen = pd.read_csv(run / "scenarios.csv").set_index("process")
    rep = stages[stages["process"] == "repeated"]
    imp = stages[stages["process"] == "improvement"]
    assert rep["valid"].all() and (rep["action"] == "backup").all() and (rep["confidence"] == 0.8).all()
    # backup is not admissible at the preparation stage: the trajectory ends there as an error
    assert len(imp) == len(scen.loc[["improvement"]]) and not imp["valid"].any()
    assert (imp["invalid_reason"] == "illegal_action").all()
    assert scen.loc["improvement", "error"].all() and (scen.loc["improvement", "stages_reached"] == 0).all()
    assert (stages["model"] == "mock").all()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["llm"]["calls_sent"] == len(stages)
    # each stage event names its request in the store (the viewer shows the request and raw answer)
    keys = [
        e["request"]
        for e in map(json.loads, (run / "events.jsonl").read_text().splitlines())
        if e["type"] == "stage"
    ]
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        assert set(keys) == {k for (k,) in conn.execute("SELECT key FROM responses")}
    assert len(keys) == len(set(keys)) == len(stages)
    # resume: re-running the same command replays every answer from the request store
    code, again = run_job_dir(over, "again")
    assert code == 0
    assert json.loads((again / "manifest.json").read_text())["llm"]["cache_hits"] == len(stages)
    assert (again / "stages.csv").read_bytes() == (run / "stages.csv").read_bytes()
    replayed = [
        e["request"]
        for e in map(json.loads, (again / "events.jsonl").read_text().splitlines())
        if e["type"] == "stage"
    ]
    assert sorted(replayed) == sorted(keys)  # the same requests, answered from the store


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("game.set=bogus", "game.set"),
        ("game.limit=0", "game.limit"),
        ("game.categories=[no such category]", "game.categories"),
        ("agent=bayes", "agent"),
    ],
)
def test_bad_options_fail_naming_the_key(run_job_dir, capsys, override, key):
    code, _ = run_job_dir(["+experiment=reliance", override, "progress=false"], "bad")
    assert code == 2
    err = capsys.readouterr().err
    assert f"'{key}'" in err
