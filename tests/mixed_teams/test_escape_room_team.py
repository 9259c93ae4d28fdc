"""Escape-room mixed teams: each seat its own agent and model, its own client, server and store keys."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.mixed_teams.conftest import KEY_ONE, KEY_TWO, bearer, job_model, manifest, model_mapping
from trustsim.config import validate_config
from trustsim.errors import ConfigError

TABLES = ("decisions.csv", "games.csv", "agent_games.csv", "predictions.csv")


def is_puzzle_call(body: dict) -> bool:
    """An own-answer or verifier request (a seat solving a puzzle in a stateless call), in either style."""
    text = body["messages"][-1]["content"]
    reference = ("You are given a puzzle to solve.", "You are verifying another player's answer.")
    return text.startswith(reference) or text.endswith("Reply with the integer answer only.")


def puzzle_calls(server) -> list[dict]:
    return [r for r in server.requests if is_puzzle_call(r)]


def decision_calls(server) -> list[dict]:
    return [r for r in server.requests if not is_puzzle_call(r)]


def puzzle_calls_expected(decisions: pd.DataFrame, seats: list[str]) -> int:
    """One own answer per seat and game, plus one call per verification of those seats."""
    mine = decisions[decisions["seat"].isin(seats)]
    games = mine[["run_id", "session", "game", "seat"]].drop_duplicates()
    return len(games) + int((mine["resolved_action"] == "verify").sum())


@pytest.mark.slow
@pytest.mark.parametrize("store", ["store_path", "store_dir"])
def test_two_models_each_server_gets_only_its_seats_requests(servers, run_job_dir, tmp_path, store) -> None:
    """Each seat's client reaches its own server with its own key; every client shares the job's request
    store (with ``llm.store_dir``, the job's one shard: a single writer)."""
    one, two = servers
    where = (
        f"llm.store_path={tmp_path / 'store.sqlite'}"
        if store == "store_path"
        else f"llm.store_dir={tmp_path / 'shards'}"
    )
    over = [
        "+experiment=mid2strike",
        "agent=llm",
        *job_model("model-one", one, KEY_ONE),
        f"game.seats.C.model={model_mapping('model-two', two, KEY_TWO)}",
        where,
        "game.games=2",
        "runs=2",
    ]
    code, run = run_job_dir(over, "run1")
    assert code == 0
    decisions = pd.read_csv(run / "decisions.csv")
    tested = decisions[decisions["seat"] != "D"]
    by_seat = tested.groupby("seat")["model"].unique().map(list).to_dict()
    assert by_seat == {"A": ["model-one"], "B": ["model-one"], "C": ["model-two"]}
    # The study preset asks each seat's model for its decisions, its own answers and its verifications
    # (game.own_answer/verifier auto -> llm): every A/B call went to server one, every C call to server two,
    # each with its own model id and key.
    assert len(decision_calls(one)) == int(tested["seat"].isin(["A", "B"]).sum()) > 0
    assert len(decision_calls(two)) == int((tested["seat"] == "C").sum()) > 0
    assert len(puzzle_calls(one)) == puzzle_calls_expected(decisions, ["A", "B"]) > 0
    assert len(puzzle_calls(two)) == puzzle_calls_expected(decisions, ["C"]) > 0
    assert {r["model"] for r in one.requests} == {"model-one"}
    assert {r["model"] for r in two.requests} == {"model-two"}
    assert bearer(one) == {"Bearer sk-team-one-0123456789abcdef"}
    assert bearer(two) == {"Bearer sk-team-two-0123456789abcdef"}
    m = manifest(run)
    team = "A=llm:model-one;B=llm:model-one;C=llm:model-two"
    assert m["cell"]["team"] == team and m["cell"]["model"] == "model-one+model-two"
    assert m["llm"]["by_model"]["model-one"]["calls_sent"] == len(one.requests)
    assert m["llm"]["by_model"]["model-two"]["calls_sent"] == len(two.requests)
    assert m["llm"]["calls_sent"] == len(one.requests) + len(two.requests)
    assert set(pd.read_csv(run / "games.csv")["team"]) == {team}
    agent_games = pd.read_csv(run / "agent_games.csv")
    assert set(agent_games.loc[agent_games["seat"] == "C", "model"]) == {"model-two"}
    # A re-run replays every seat from its own store keys: nothing sent, tables byte-identical.
    sent = (len(one.requests), len(two.requests))
    code, rerun = run_job_dir(over, "run2")
    assert code == 0 and (len(one.requests), len(two.requests)) == sent
    assert manifest(rerun)["llm"]["calls_sent"] == 0
    for name in TABLES:
        assert (run / name).read_bytes() == (rerun / name).read_bytes(), name


def test_one_llm_seat_with_two_bayes_seats(servers, run_job_dir, tmp_path) -> None:
    one, two = servers
    over = [
        "+experiment=mid2strike",
        "agent=bayes",
        "game.seats.B.agent=llm",
        f"game.seats.B.model={model_mapping('model-two', two, KEY_TWO)}",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=2",
    ]
    code, run = run_job_dir(over, "run")
    assert code == 0
    decisions = pd.read_csv(run / "decisions.csv")
    models = decisions.groupby("seat")["model"].unique().map(list).to_dict()
    agents = decisions.groupby("seat")["agent"].unique().map(list).to_dict()
    assert models == {"A": ["scripted"], "B": ["model-two"], "C": ["scripted"], "D": ["scripted"]}
    assert agents["B"] == ["llm"] and agents["A"] == ["bayes"] and agents["C"] == ["bayes"]
    assert len(one.requests) == 0
    assert len(decision_calls(two)) == int((decisions["seat"] == "B").sum()) > 0
    assert len(puzzle_calls(two)) == puzzle_calls_expected(decisions, ["B"]) > 0  # B's, never A's or C's
    cell = manifest(run)["cell"]
    assert cell["team"] == "A=bayes;B=llm:model-two;C=bayes"
    assert cell["agent"] == "bayes+llm" and cell["model"] == "model-two"


def test_the_mixed_team_preset_runs(servers, run_job_dir, tmp_path) -> None:
    one, _ = servers
    over = [
        "+experiment=mixed_team",
        *job_model("model-one", one, KEY_ONE),
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=1",
    ]
    code, run = run_job_dir(over, "run")
    assert code == 0
    assert manifest(run)["cell"]["team"] == "A=llm:model-one;B=llm:model-one;C=bayes"
    decisions = pd.read_csv(run / "decisions.csv")
    assert len(one.requests) == int(decisions["seat"].isin(["A", "B"]).sum()) > 0


def test_default_team_is_unchanged(run_job_dir) -> None:
    """No per-seat setting, or per-seat settings equal to the groups: the same config, run id and bytes."""
    base = ["game=escape_room", "agent=bayes", "schedule=mid2strike", "game.games=3", "runs=2"]
    code, plain = run_job_dir(base, "plain")
    assert code == 0
    same = [*base, "game.seats.A.agent=bayes", "game.seats.C.agent={name: bayes}"]
    code, spelled = run_job_dir(same, "spelled")
    assert code == 0
    m1, m2 = manifest(plain), manifest(spelled)
    assert m1["run_id"] == m2["run_id"]
    assert "seats" not in m1["config"]["game"] and "team" not in m1["cell"]
    for name in TABLES:
        assert (plain / name).read_bytes() == (spelled / name).read_bytes(), name
    assert pd.read_csv(plain / "games.csv")["team"].isna().all()


@pytest.mark.parametrize(
    ("override", "key", "words"),
    [
        ("+game.seats.D.agent=llm", "game.seats.D", "valid keys: A, B, C"),
        ("+game.seats.B.modle=gpt-5.1", "game.seats.B.modle", "did you mean 'game.seats.B.model'"),
        ("game.seats.B.agent=bayse", "game.seats.B.agent", "did you mean 'bayes'"),
        ("game.seats.B.model=gpt-5.2", "game.seats.B.model", "unknown model preset"),
        ("game.seats.B.model={name: x}", "game.seats.B.model", "not a language model"),
        (
            "game.seats.B.model={preset: gpt-5.1, temprature: 1}",
            "game.seats.B.model.temprature",
            "unknown key",
        ),
        ("game.seats.B.agent={name: llm, prompt: nope}", "game.seats.B.agent.prompt", "prompt must be"),
        ("game.seats.B.agent={name: bayes, prior: 2}", "game.seats.B.agent.prior", "unknown key"),
    ],
)
def test_bad_seat_settings_fail_naming_the_key(compose, override, key, words) -> None:
    with pytest.raises(ConfigError) as err:
        cfg = compose(["+experiment=mid2strike", "agent=llm", override])
        validate_config(cfg, [override])
    assert err.value.key == key and words in str(err.value)


def test_seat_model_forms_resolve_to_the_plain_config(compose) -> None:
    over = [
        "agent=bayes",
        "game.seats.A.agent=llm",
        "game.seats.A.model=gpt-5.1",
        "game.seats.B.agent=llm",
        "game.seats.B.model={preset: vllm, api_base: 'http://127.0.0.1:9001/v1'}",
        "game.seats.C.model=gpt-5.1",  # bayes: no effect, warned and dropped
    ]
    valid = validate_config(compose(over), over)
    seats = valid.cfg["game"]["seats"]
    assert seats["A"]["model"]["litellm_model"].startswith("openai/gpt-5.1")
    assert seats["B"]["model"]["name"] == "vllm"
    assert seats["B"]["model"]["api_base"] == "http://127.0.0.1:9001/v1"
    assert seats["C"] == {"agent": None, "model": None}
    assert valid.uses_llm
    assert any("game.seats.C.model" in w for w in valid.warnings)


def test_llm_verifier_needs_an_llm_seat(compose) -> None:
    over = ["agent=bayes", "game.verifier=llm"]
    with pytest.raises(ConfigError, match="LLM seat"):
        validate_config(compose(over), over)
    over = [*over, "game.seats.B.agent=llm"]
    assert validate_config(compose(over), over).uses_llm


def test_a_mixed_team_faces_the_same_worlds(run_job_dir) -> None:
    """The team is no world key: the same seeds, puzzles and partner schedule as the default team."""
    base = ["game=escape_room", "agent=bayes", "schedule=mid2strike", "game.games=3", "runs=2"]
    code, plain = run_job_dir(base, "plain")
    assert code == 0
    code, mixed = run_job_dir([*base, "game.seats.C.agent=always_verify"], "mixed")
    assert code == 0
    m1, m2 = manifest(plain), manifest(mixed)
    assert m1["world_hash"] == m2["world_hash"] and m1["run_id"] != m2["run_id"]
    g1, g2 = pd.read_csv(plain / "games.csv"), pd.read_csv(mixed / "games.csv")
    world = ["session", "game", "seed", "d_correct", "partner_puzzle"]
    assert g1[world].equals(g2[world])
    d1, d2 = pd.read_csv(plain / "decisions.csv"), pd.read_csv(mixed / "decisions.csv")
    first = ["session", "game", "seat", "own_puzzle"]  # round 1: every seat holds the same puzzle
    assert (
        d1[d1["round"] == 1][first]
        .reset_index(drop=True)
        .equals(d2[d2["round"] == 1][first].reset_index(drop=True))
    )
    assert set(g2["team"]) == {"A=bayes;B=bayes;C=always_verify"}


def test_a_seat_without_its_key_fails_naming_the_variable(
    servers, run_job_dir, tmp_path, monkeypatch
) -> None:
    one, two = servers
    monkeypatch.delenv(KEY_TWO)
    over = [
        "+experiment=mid2strike",
        "agent=llm",
        *job_model("model-one", one, KEY_ONE),
        f"game.seats.C.model={model_mapping('model-two', two, KEY_TWO)}",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=1",
    ]
    code, run = run_job_dir(over)
    failure = manifest(run)["failure"]
    assert code == 2 and KEY_TWO in failure["reason"]
    assert len(two.requests) == 0


def test_each_llm_seat_records_its_own_prompt_style(servers, run_job_dir, tmp_path) -> None:
    one, two = servers
    seat_c = model_mapping("model-two", two, KEY_TWO).replace("}", ", prompt: trustsim}")
    over = [
        "+experiment=mid2strike",  # agent.prompt=reference
        "agent=llm",
        *job_model("model-one", one, KEY_ONE),
        f"game.seats.C.model={seat_c}",
        f"llm.store_path={tmp_path / 'store.sqlite'}",
        "game.games=1",
    ]
    code, run = run_job_dir(over)
    assert code == 0
    dec = pd.read_csv(run / "decisions.csv", keep_default_na=False)
    prompts = dec.groupby("seat")["prompt"].unique().map(list).to_dict()
    assert prompts == {"A": ["reference"], "B": ["reference"], "C": ["trustsim"], "D": [""]}
    ag = pd.read_csv(run / "agent_games.csv", keep_default_na=False)
    assert ag.set_index("seat")["prompt"].to_dict() == {
        "A": "reference",
        "B": "reference",
        "C": "trustsim",
        "D": "",
    }
    assert manifest(run)["cell"]["prompt"] == "reference+trustsim"
