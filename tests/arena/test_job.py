"""Arena jobs end to end (in-process): tables, determinism, tournaments, LLM via litellm mock_response."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from games.arena.tables import MATCH_COLUMNS, MOVE_COLUMNS, PREDICTION_COLUMNS


def _events(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


def test_ipd_preset_run_directory(run_job_dir) -> None:
    code, run = run_job_dir(["+experiment=ipd"])
    assert code == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["game"] == "arena"
    assert manifest["cell"]["opponent"] == "ipd_tit_for_tat" and manifest["cell"]["model"] == "scripted"
    moves = pd.read_csv(run / "moves.csv")
    assert list(moves.columns) == MOVE_COLUMNS and len(moves) == 2 * 20
    matches = pd.read_csv(run / "matches.csv")
    assert list(matches.columns) == MATCH_COLUMNS
    assert matches.loc[0, "payoff_a"] == 60 and matches.loc[0, "mutual_coop"] == 1.0
    preds = pd.read_csv(run / "predictions.csv")
    assert list(preds.columns) == PREDICTION_COLUMNS and len(preds) == 20
    assert set(preds["source"]) == {"native"} and set(preds["subject"]) == {"tit_for_tat"}
    assert (preds["outcome"] == 1).all() and preds["cluster"].nunique() == 1
    ev = _events(run)
    assert [e["seq"] for e in ev] == list(range(len(ev)))
    assert sum(e["type"] == "move" for e in ev) == 40 and sum(e["type"] == "match_start" for e in ev) == 1


def test_same_seed_identical_tables(run_job_dir) -> None:
    over = ["+experiment=ipd", "game.opponent=random", "game.noise=0.1", "runs=3"]
    _, a = run_job_dir(over, "a")
    _, b = run_job_dir(over, "b")
    for name in ("moves.csv", "matches.csv", "predictions.csv"):
        ta, tb = pd.read_csv(a / name).drop(columns="run_id"), pd.read_csv(b / name).drop(columns="run_id")
        pd.testing.assert_frame_equal(ta, tb)
    _, c = run_job_dir([*over[:-1], "runs=3", "seed=1"], "c")
    assert not pd.read_csv(c / "moves.csv")["move"].equals(pd.read_csv(a / "moves.csv")["move"])


@pytest.mark.slow
def test_tournament_round_robin(run_job_dir) -> None:
    code, run = run_job_dir(["+experiment=ipd_tournament", "game.rounds=10", "runs=2"])
    assert code == 0
    matches = pd.read_csv(run / "matches.csv")
    n_players = 10  # every scripted player (the agent, tit-for-tat, is one of them)
    assert len(matches) == 2 * n_players * (n_players - 1) // 2
    pairs = set(zip(matches["player_a"], matches["player_b"], strict=True))
    assert ("always_defect", "tit_for_tat") in pairs or ("tit_for_tat", "always_defect") in pairs
    assert matches["match"].nunique() == len(matches)
    code, run = run_job_dir(["+experiment=ipd_tournament", "game.rounds=5", "game.self_play=true"], "sp")
    assert len(pd.read_csv(run / "matches.csv")) == n_players * (n_players + 1) // 2


def test_unknown_horizon_anonymous_high_temptation(run_job_dir) -> None:
    over = ["+experiment=ipd", "game.horizon=unknown", "game.continuation=0.8", "game.rounds=100"]
    code, run = run_job_dir([*over, "game.temptation=12", "game.opponent_identity=anonymous", "runs=5"])
    assert code == 0
    m = pd.read_csv(run / "matches.csv")
    assert m["rounds"].nunique() > 1 and m["announced_rounds"].isna().all() and (m["temptation"] == 12).all()


@pytest.mark.parametrize(
    ("over", "key"),
    [
        (["game.opponent=bayes"], "game.opponent"),
        (["agent=bayes"], "agent"),
        (["game.temptation=2"], "game.temptation"),
        (["game.noise=2"], "game.noise"),
        (["game.horizon=forever"], "game.horizon"),
        (["game.opponent={name:random,p:3}"], "game.opponent"),
    ],
)
def test_bad_config_names_the_key(run_job_dir, capsys, over: list[str], key: str) -> None:
    code, run = run_job_dir(["+experiment=ipd", *over])
    assert code == 2
    err = capsys.readouterr().err
    assert key in err
    assert json.loads((run / "manifest.json").read_text())["status"] == "failed"


def test_llm_opponent_through_litellm_mock(run_job_dir, tmp_path: Path) -> None:
    reply = json.dumps({"reasoning": "tit for tat has cooperated", "move": "C", "p_opponent_cooperates": 0.7})
    over = [
        "+experiment=ipd",
        "agent=ipd_tit_for_tat",
        "game.opponent=llm",
        "game.rounds=4",
        "runs=2",
        "model.name=mock",
        "model=scripted",
        "+model.litellm_model=openai/mock-model",
        f"+model.params.mock_response='{reply}'",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
    ]
    code, run = run_job_dir(over)
    assert code == 0, (run / "manifest.json").read_text()
    preds = pd.read_csv(run / "predictions.csv")
    assert len(preds) == 8 and set(preds["model"]) == {"mock"} and (preds["p"] == 0.7).all()
    assert set(preds["item"]) == {"B"} and set(preds["subject"]) == {"tit_for_tat"}
    moves = pd.read_csv(run / "moves.csv")
    assert (moves["move"] == "C").all()
    reasons = [e for e in _events(run) if e["type"] == "move" and e["seat"] == "B"]
    assert reasons[0]["reasoning"] == "tit for tat has cooperated" and reasons[0]["raw"] == reply
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["llm"]["calls_sent"] == 8
    # the model's moves name their requests in the store; the scripted player's name none
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        stored = {k for (k,) in conn.execute("SELECT key FROM responses")}
    assert {e["request"] for e in reasons} == stored and len(stored) == 8
    assert not any("request" in e for e in _events(run) if e["type"] == "move" and e["seat"] == "A")
    # re-running replays every request from the store
    code, run2 = run_job_dir(over, "again")
    assert json.loads((run2 / "manifest.json").read_text())["llm"]["cache_hits"] == 8
    assert (run2 / "moves.csv").read_bytes() == (run / "moves.csv").read_bytes()


def test_model_vs_model_match(run_job_dir, tmp_path: Path) -> None:
    reply = json.dumps({"reasoning": "try cooperation", "move": "C", "p_opponent_cooperates": 0.6})
    code, run = run_job_dir(
        [
            "+experiment=ipd",
            "agent=llm",
            "game.opponent={name:llm,model:openai/mock-b}",
            "game.rounds=3",
            "model.name=mock-a",
            "model=scripted",
            "+model.litellm_model=openai/mock-a",
            f"+model.params.mock_response='{reply}'",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
        ]
    )
    assert code == 0
    preds = pd.read_csv(run / "predictions.csv")
    assert sorted(preds["model"].unique()) == ["mock-a", "openai/mock-b"] and len(preds) == 6
    assert set(preds.loc[preds["model"] == "mock-a", "subject"]) == {"openai/mock-b"}
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["cell"]["model"] == "mock-a" and manifest["llm"]["calls_sent"] == 6
