"""From a trustsim configuration to samples: one unit of play per sample, each one trustsim job (runs=1)."""

from __future__ import annotations

from collections import Counter

import pytest

from trustsim.errors import ConfigError
from trustsim_inspect import tasks
from trustsim_inspect.bridge import MAIN, model_id
from trustsim_inspect.samples import compose_base, plan_samples


def _samples(task):
    return {s.id: s for s in task.dataset}


def test_escape_room_one_session_per_sample_with_its_own_seed():
    task = tasks.escape_room(experiment="mid2strike,anchor", runs=3, seed=5, overrides="game.games=2")
    samples = _samples(task)
    assert len(samples) == 6
    s = samples["mid2strike-session-seed6"]
    assert s.metadata["trustsim_overrides"] == [
        "+experiment=mid2strike", "model=openai_compatible", "agent=llm", "game.games=2", "seed=6", "runs=1"
    ]  # fmt: skip
    assert (s.metadata["schedule"], s.metadata["memory"], s.metadata["partner_slot"]) == (
        "mid2strike",
        "transcript",
        "fixed",
    )
    assert samples["anchor-session-seed7"].metadata["memory"] == "none"


def test_trust_game_one_pair_per_sample():
    samples = _samples(tasks.trust_game(pairs=3, runs=2, agent="tg_fair"))
    assert sorted(s.metadata["seed"] for s in samples.values()) == [0, 1, 2, 3, 4, 5]
    assert all("game.pairs=1" in s.metadata["trustsim_overrides"] for s in samples.values())


def test_reliance_one_scenario_or_pair_per_sample():
    main = _samples(tasks.reliance(limit=2, agent="oracle"))
    assert len(main) == 2
    for s in main.values():
        assert f"game.scenarios=[{s.metadata['item']}]" in s.metadata["trustsim_overrides"]
    pairs = _samples(tasks.reliance(set="pairs", limit=1, agent="oracle"))
    (pair,) = pairs.values()  # a pair's two sides are one unit
    assert pair.metadata["unit"] == "pair"


def test_the_trust_card_battery_as_samples():
    samples = _samples(tasks.trust_card(size="smoke"))
    parts = Counter(s.metadata["part"] for s in samples.values())
    assert parts == {"anchor": 1, "smooth": 1, "1strike": 1, "mid2strike": 1, "recur": 1, "reliance": 1,
                     "reliance_pairs": 1, "reliance_support": 1, "arena": 1, "tg_trustor": 2, "tg_trustee": 2}  # fmt: skip
    arena = next(s for s in samples.values() if s.metadata["part"] == "arena")
    assert arena.metadata["unit"] == "tournament"
    assert "card.size=smoke" in arena.metadata["trustsim_overrides"]


def test_a_bad_setting_fails_when_the_task_is_made_naming_the_key():
    with pytest.raises(ConfigError, match=r"game\.coins"):
        tasks.escape_room(overrides=["game.coins=-1"])


def test_epochs_play_new_worlds_and_roles_take_their_seats():
    (job, _) = plan_samples(compose_base("mid2strike", ["agent=llm", "runs=2"], "openai_compatible"), [])
    assert job.for_epoch(3).config["seed"] == 4 and job.for_epoch(3).cell["seed"] == 4  # 2 sessions per epoch
    assert "seed=4" in job.for_epoch(3).overrides and "seed=0" not in job.for_epoch(3).overrides
    cfg = job.with_models("openai-api/one/m", {"seat_c": "openai-api/two/m", "trustee": "x"})
    assert (cfg["model"]["name"], cfg["model"]["litellm_model"]) == ("openai-api/one/m", MAIN)
    seat_c = cfg["game"]["seats"]["C"]["model"]
    assert (seat_c["name"], seat_c["litellm_model"], seat_c["api_base"]) == (
        "openai-api/two/m",
        model_id("seat_c"),
        None,
    )
    assert (
        cfg["game"]["seats"]["A"]["model"] is None and "trustee" not in cfg["game"]
    )  # not a role of this game
