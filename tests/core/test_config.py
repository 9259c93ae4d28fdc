"""Every preset composes and validates; bad input fails at start with a message naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustsim.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
ESCAPE_PRESETS = ["smooth", "1strike", "2strike", "3strike", "mid2strike", "recur", "anchor", "anchor_dwrong"]


@pytest.mark.parametrize("preset", sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml")))
def test_every_preset_composes(compose, preset):
    cfg = compose([f"+experiment={preset}"])
    assert cfg["name"] == preset
    assert cfg["game"]["runner"]


@pytest.mark.parametrize("preset", ESCAPE_PRESETS)
def test_escape_presets_validate(compose, preset):
    from games.escape_room.job import validate
    from games.escape_room.options import options_from_config

    cfg = compose([f"+experiment={preset}"])
    validate(cfg)
    options = options_from_config(cfg)
    assert options.games == (10 if preset.startswith("anchor") else 11)
    assert options.memory == ("none" if preset.startswith("anchor") else "transcript")


def test_mid2strike_schedule(compose):
    from games.escape_room.options import options_from_config

    options = options_from_config(compose(["+experiment=mid2strike"]))
    assert "".join("T" if c else "F" for c in options.d_correct) == "TTTFFTTTTTT"


@pytest.mark.parametrize(
    ("override", "key", "fragment"),
    [
        ("game.coins=-1", "game.coins", "must be >= 0"),
        ("game.coins=abc", "game.coins", "expected an integer"),
        ("game.games=12", "schedule.pattern", "has 11 entries but game.games=12"),
        ("game.partner_slot=left", "game.partner_slot", "expected one of fixed, random"),
        ("game.verifier=oracle", "game.verifier", "expected one of exact, llm"),
        ("runs=0", "runs", "must be >= 1"),
        ("seed=-3", "seed", "must be >= 0"),
        ("schedule.pattern=TTX", "schedule.pattern", "entry 2"),
        ("game.reveal_after_game=maybe", "game.reveal_after_game", "expected true or false"),
    ],
)
def test_bad_values_name_the_key(run_job_dir, capsys, override, key, fragment):
    code, run_dir = run_job_dir(["+experiment=smooth", "agent=bayes", override])
    err = capsys.readouterr().err
    assert code == 2
    assert f"config error at '{key}'" in err and fragment in err
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and key in manifest["failure"]["reason"]
    assert not (run_dir / "events.jsonl").exists()  # failed at start: nothing was run


def test_agent_not_available_for_game(compose):
    from games.escape_room.options import options_from_config

    cfg = compose(["+experiment=smooth"])
    cfg["agent"] = {"name": "oracle"}
    with pytest.raises(ConfigError, match="not available for game 'escape_room'"):
        options_from_config(cfg)


def test_custom_schedule_from_the_command_line(run_job_dir):
    import pandas as pd

    code, run_dir = run_job_dir(
        ["game=escape_room", "schedule=custom", "schedule.pattern=TFT", "agent=never_verify"]
    )
    assert code == 0
    games = pd.read_csv(run_dir / "games.csv")
    assert games.d_correct.tolist() == [True, False, True]


def test_bad_agent_parameters(run_job_dir, capsys):
    code, _ = run_job_dir(["+experiment=smooth", "agent=bayes", "agent.prior_alpha=-1"])
    assert code == 2 and "bad parameters for agent 'bayes'" in capsys.readouterr().err
