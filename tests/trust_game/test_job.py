"""Trust-game jobs end to end (in-process): presets, exact scripted runs, mixed pairs, determinism, config
errors, LLM players through litellm mock_response (replayed byte-identically)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from games.predictions import PREDICTION_COLUMNS
from games.trust_game.tables import EXCHANGE_COLUMNS

TABLES = ("exchanges.csv", "predictions.csv")


def _events(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


def _mock(reply: dict, tmp_path: Path, name: str = "mock") -> list[str]:
    return [
        "agent=llm",
        "model=scripted",
        f"model.name={name}",
        f"+model.litellm_model=openai/{name}",
        f"+model.params.mock_response='{json.dumps(reply)}'",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
    ]


def test_one_shot_preset(run_job_dir) -> None:
    code, run = run_job_dir(["+experiment=trust_game"])
    assert code == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["game"] == "trust_game"
    cell = manifest["cell"]
    assert cell["trustor"] == cell["trustee"] == "tg_human" and cell["variant"] == "one_shot"
    x = pd.read_csv(run / "exchanges.csv")
    assert list(x.columns) == EXCHANGE_COLUMNS and len(x) == 100 and x["pair"].tolist() == list(range(1, 101))
    assert (x["round"] == 1).all() and x["valid"].all()
    assert (x["trustor_payoff"] == 10 - x["sent"] + x["returned"]).all()
    assert (x["trustee_payoff"] == 10 + 3 * x["sent"] - x["returned"]).all()
    assert list(pd.read_csv(run / "predictions.csv").columns) == PREDICTION_COLUMNS
    ev = _events(run)
    assert [e["seq"] for e in ev] == list(range(len(ev)))
    assert sum(e["type"] == "exchange" for e in ev) == 100


def test_repeated_preset(run_job_dir) -> None:
    code, run = run_job_dir(["+experiment=trust_game_repeated"])
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert len(x) == 200 and x.groupby("pair")["round"].max().eq(10).all()
    preds = pd.read_csv(run / "predictions.csv")  # tg_reciprocal states P(r >= s) as trustor
    assert len(preds) == (x["sent"] > 0).sum() and set(preds["item"]) == {"return_at_least_sent"}
    assert preds["cluster"].nunique() == 20 and preds["p"].between(0, 1).all()


@pytest.mark.parametrize("preset", ["trust_game", "trust_game_repeated"])
def test_selfish_sends_nothing_anywhere(run_job_dir, preset: str) -> None:
    code, run = run_job_dir([f"+experiment={preset}", "agent=tg_selfish", "runs=2"])
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert len(x) == (200 if preset == "trust_game" else 400)
    assert (x["sent"] == 0).all() and (x["returned"] == 0).all() and (~x["trustee_asked"]).all()
    assert (x["trustor_payoff"] == 10).all() and (x["trustee_payoff"] == 10).all()


def test_fair_sends_ten_and_gets_fifteen(run_job_dir) -> None:
    code, run = run_job_dir(["+experiment=trust_game_repeated", "agent=tg_fair", "game.pairs=5"])
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert (x["sent"] == 10).all() and (x["received"] == 30).all() and (x["returned"] == 15).all()
    assert (x["return_ratio"] == 0.5).all() and len(x) == 50


def test_mixed_pairs_and_variants(run_job_dir) -> None:
    over = ["+experiment=trust_game", "game.trustor=tg_fair", "game.trustee=tg_selfish", "game.pairs=4"]
    code, run = run_job_dir([*over, "game.multiplier=2", "game.endowment=20", "game.trustee_endowment=5"])
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert set(x["trustor"]) == {"tg_fair"} and set(x["trustee"]) == {"tg_selfish"}
    assert (x["sent"] == 20).all() and (x["received"] == 40).all() and (x["returned"] == 0).all()
    assert (x["trustee_payoff"] == 45).all() and (x["trustee_endowment"] == 5).all()
    code, run = run_job_dir(
        [
            "+experiment=trust_game_repeated",
            "game.horizon=unknown",
            "game.continue_p=0.8",
            "game.max_rounds=9",
            "game.trustee={name:tg_reciprocal,return_share:1.0}",
            "game.history=none",
        ],
        "unknown",
    )
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    lengths = x.groupby("pair")["round"].max()
    assert lengths.nunique() > 1 and lengths.max() <= 9 and (x["history"] == "none").all()


def test_population_history(run_job_dir, tmp_path: Path) -> None:
    table = tmp_path / "population.csv"
    table.write_text("sent,returned\n10,15\n10,12\n0,0\n5,3\n")
    over = ["+experiment=trust_game", "game.pairs=3", "game.history=population"]
    code, run = run_job_dir([*over, f"game.population_table={table}"])
    assert code == 0 and len(pd.read_csv(run / "exchanges.csv")) == 3
    code, _ = run_job_dir(over, "missing")
    assert code == 2


def test_same_command_same_tables(run_job_dir) -> None:
    over = ["+experiment=trust_game_repeated", "agent=tg_random", "game.pairs=6", "runs=2"]
    _, a = run_job_dir(over, "a")
    _, b = run_job_dir(over, "b")
    for name in TABLES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    _, c = run_job_dir([*over, "seed=1"], "c")
    assert (c / "exchanges.csv").read_bytes() != (a / "exchanges.csv").read_bytes()


@pytest.mark.parametrize(
    ("over", "key"),
    [
        (["game.multiplier=0"], "game.multiplier"),
        (["game.history=everything"], "game.history"),
        (["game.pairs=0"], "game.pairs"),
        (["+game.pairz=3"], "game.pairz"),
        (["game.trustor=bayes"], "game.trustor"),
        (["game.trustee={name:tg_reciprocal,gain:-1}"], "game.trustee"),
        (["game.trustee={name:tg_fair,generosity:1}"], "game.trustee"),
        (["agent=ipd_tit_for_tat"], "agent"),
        (["game.history=population"], "game.population_table"),
    ],
)
def test_bad_config_names_the_key(run_job_dir, capsys, over: list[str], key: str) -> None:
    code, run = run_job_dir(["+experiment=trust_game", *over])
    assert code == 2
    assert key in capsys.readouterr().err
    assert json.loads((run / "manifest.json").read_text())["status"] == "failed"


REPLY = {
    "reasoning": "split the gains",
    "send": 6,
    "expected_return": 9,
    "p_return_at_least_sent": 0.7,
    "return": 9,
    "p_next_send_at_least": 0.8,
}


def test_llm_players_through_litellm_mock_and_replay(run_job_dir, tmp_path: Path) -> None:
    over = ["+experiment=trust_game_repeated", "game.pairs=3", "game.rounds=2", *_mock(REPLY, tmp_path)]
    code, run = run_job_dir(over)
    assert code == 0, (run / "manifest.json").read_text()
    x = pd.read_csv(run / "exchanges.csv")
    assert (x["sent"] == 6).all() and (x["returned"] == 9).all() and x["valid"].all()
    assert set(x["trustor_model"]) == {"mock"} and (x["sent_raw"] == 6).all()
    assert (x["expected_return"] == 9).all() and (x["expected_return_error"] == 0).all()
    preds = pd.read_csv(run / "predictions.csv")
    trustor = preds[preds["item"] == "return_at_least_sent"]
    trustee = preds[preds["item"] == "next_send_at_least"]
    assert len(trustor) == 6 and (trustor["p"] == 0.7).all() and (trustor["outcome"] == 1).all()
    assert len(trustee) == 3 and (trustee["p"] == 0.8).all() and (trustee["round"] == 1).all()
    assert set(trustee["subject_kind"]) == {"trustor"} and set(trustor["subject"]) == {"mock"}
    ex = [e for e in _events(run) if e["type"] == "exchange"]
    assert ex[0]["trustor"]["raw"] == json.dumps(REPLY) and ex[0]["trustor"]["reasoning"] == "split the gains"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["llm"]["calls_sent"] == 12  # 6 sends + 6 returns
    # each role's decision names its request in the store (the viewer shows the request and raw answer)
    keys = [e[role]["request"] for e in ex for role in ("trustor", "trustee")]
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        assert set(keys) == {k for (k,) in conn.execute("SELECT key FROM responses")} and len(set(keys)) == 12
    code, again = run_job_dir(over, "again")
    assert json.loads((again / "manifest.json").read_text())["llm"]["cache_hits"] == 12
    for name in TABLES:
        assert (again / name).read_bytes() == (run / name).read_bytes(), name


def test_llm_invalid_amount_recorded_with_raw_text(run_job_dir, tmp_path: Path) -> None:
    reply = {**REPLY, "send": "ten"}
    over = ["+experiment=trust_game", "game.pairs=2", *_mock(reply, tmp_path)]
    code, run = run_job_dir(over)
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert (x["sent"] == 0).all() and (~x["valid"]).all() and (~x["sent_valid"]).all()
    assert (x["sent_raw"] == "ten").all() and (x["sent_invalid_reason"] == "not_an_integer").all()
    assert (~x["trustee_asked"]).all() and (x["trustor_payoff"] == 10).all()
    assert json.loads((run / "manifest.json").read_text())["llm"]["calls_sent"] == 2  # trustees not asked


def test_model_as_trustor_against_a_scripted_or_other_model_trustee(run_job_dir, tmp_path: Path) -> None:
    over = ["+experiment=trust_game", "game.pairs=2", *_mock(REPLY, tmp_path, "mock-a")]
    code, run = run_job_dir([*over, "game.trustee=tg_fair"])
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert set(x["trustee_model"]) == {"scripted"} and (x["returned"] == 9).all()  # half of 18
    code, run = run_job_dir([*over, "game.trustee={name:llm,model:openai/mock-b}"], "mm")
    assert code == 0
    x = pd.read_csv(run / "exchanges.csv")
    assert set(x["trustor_model"]) == {"mock-a"} and set(x["trustee_model"]) == {"openai/mock-b"}
    cell = json.loads((run / "manifest.json").read_text())["cell"]
    assert cell["model"] == "mock-a+openai/mock-b"


def test_options_without_effect_are_warned(run_job_dir, capsys) -> None:
    code, _ = run_job_dir(["+experiment=trust_game", "agent=tg_fair", "game.pairs=2", "game.max_rounds=7"])
    assert code == 0 and "game.max_rounds has no effect" in capsys.readouterr().err
