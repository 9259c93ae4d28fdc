"""Arena players and trust-game roles each with their own client: model, API base and key variable."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.mixed_teams.conftest import KEY_ONE, KEY_TWO, bearer, job_model, manifest, model_mapping
from trustsim.config import validate_config
from trustsim.errors import ConfigError
from trustsim.llm.fake_server import FakeServer

ARENA_REPLY = json.dumps({"reasoning": "cooperate", "move": "C", "p_opponent_cooperates": 0.7})
TRUST_REPLY = json.dumps(
    {
        "reasoning": "split the gains",
        "send": 6,
        "expected_return": 9,
        "p_return_at_least_sent": 0.7,
        "return": 9,
        "p_next_send_at_least": 0.8,
    }
)


def test_arena_players_each_use_their_own_server(keys, run_job_dir, tmp_path) -> None:
    with FakeServer(reply=ARENA_REPLY) as one, FakeServer(reply=ARENA_REPLY) as two:
        over = [
            "+experiment=ipd",
            "agent=llm",
            *job_model("model-one", one, KEY_ONE),
            f"game.opponent={{name: llm, model: {model_mapping('model-two', two, KEY_TWO)}}}",
            "game.rounds=4",
            "runs=2",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
        ]
        code, run = run_job_dir(over, "run1")
        assert code == 0
        moves = pd.read_csv(run / "moves.csv")
        assert set(moves.loc[moves["seat"] == "A", "model"]) == {"model-one"}
        assert set(moves.loc[moves["seat"] == "B", "model"]) == {"model-two"}
        assert set(moves.loc[moves["seat"] == "A", "opponent_model"]) == {"model-two"}
        matches = pd.read_csv(run / "matches.csv")
        assert set(matches["model_a"]) == {"model-one"} and set(matches["model_b"]) == {"model-two"}
        assert len(one.requests) == int((moves["seat"] == "A").sum()) == 8
        assert len(two.requests) == int((moves["seat"] == "B").sum()) == 8
        assert {r["model"] for r in one.requests} == {"model-one"}
        assert {r["model"] for r in two.requests} == {"model-two"}
        assert bearer(one) == {"Bearer sk-team-one-0123456789abcdef"}
        assert bearer(two) == {"Bearer sk-team-two-0123456789abcdef"}
        m = manifest(run)
        assert m["config"]["game"]["opponent"]["model"]["api_base"] == two.api_base  # resolved, recorded
        assert m["llm"]["by_model"]["model-two"]["calls_sent"] == 8
        code, rerun = run_job_dir(over, "run2")  # replay: nothing sent to either server
        assert code == 0 and len(one.requests) == len(two.requests) == 8
        for name in ("moves.csv", "matches.csv", "predictions.csv"):
            assert (run / name).read_bytes() == (rerun / name).read_bytes(), name


def test_arena_tournament_entrant_with_its_own_model(keys, run_job_dir, tmp_path) -> None:
    with FakeServer(reply=ARENA_REPLY) as two:
        over = [
            "+experiment=ipd_tournament",
            "agent=ipd_tit_for_tat",
            f"game.players=[ipd_tit_for_tat,ipd_always_defect,{{name: llm, model: {model_mapping('model-two', two, KEY_TWO)}}}]",
            "game.rounds=3",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
        ]
        code, run = run_job_dir(over)
        assert code == 0
        moves = pd.read_csv(run / "moves.csv")
        assert len(two.requests) == int((moves["model"] == "model-two").sum()) > 0
        assert manifest(run)["cell"]["model"] == "model-two"


def test_trust_game_roles_each_use_their_own_server(keys, run_job_dir, tmp_path) -> None:
    with FakeServer(reply=TRUST_REPLY) as one, FakeServer(reply=TRUST_REPLY) as two:
        over = [
            "+experiment=trust_game",
            "agent=llm",
            *job_model("model-one", one, KEY_ONE),
            f"game.trustee={{name: llm, model: {model_mapping('model-two', two, KEY_TWO)}}}",
            "game.pairs=3",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
        ]
        code, run = run_job_dir(over)
        assert code == 0
        x = pd.read_csv(run / "exchanges.csv")
        assert set(x["trustor_model"]) == {"model-one"} and set(x["trustee_model"]) == {"model-two"}
        assert len(one.requests) == len(x) == 3  # one trustor decision per exchange
        assert len(two.requests) == int(x["trustee_asked"].sum()) == 3
        assert {r["model"] for r in one.requests} == {"model-one"}
        assert {r["model"] for r in two.requests} == {"model-two"}
        assert bearer(two) == {"Bearer sk-team-two-0123456789abcdef"}
        cell = manifest(run)["cell"]
        assert cell["trustor_model"] == "model-one" and cell["trustee_model"] == "model-two"


def test_trust_game_role_model_preset_by_name(compose) -> None:
    over = ["+experiment=trust_game", "agent=tg_fair", "game.trustor={name: llm, model: gpt-5.1}"]
    valid = validate_config(compose(over), over)
    assert valid.uses_llm
    assert valid.cfg["game"]["trustor"]["model"]["litellm_model"].startswith("openai/gpt-5.1")


@pytest.mark.parametrize(
    ("over", "key"),
    [
        (
            ["+experiment=ipd", "agent=llm", "game.opponent={name: llm, model: gpt-5.2}"],
            "game.opponent.model",
        ),
        (
            ["+experiment=ipd", "agent=llm", "game.opponent={name: llm, model: {name: b, api_base: x}}"],
            "game.opponent.model",
        ),
        (
            [
                "+experiment=trust_game",
                "agent=llm",
                "game.trustee={name: llm, model: {preset: vllm, apibase: x}}",
            ],
            "game.trustee.model.apibase",
        ),
        (
            ["+experiment=trust_game", "agent=llm", "game.trustee={name: tg_fair, model: gpt-5.1}"],
            "game.trustee.model",
        ),
    ],
)
def test_bad_player_models_fail_naming_the_key(compose, over, key) -> None:
    with pytest.raises(ConfigError) as err:
        validate_config(compose(over), over)
    assert err.value.key == key
