"""Every preset composes and validates; bad input fails at start with a message naming the key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim.config import validate_config
from trustsim.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
ESCAPE_PRESETS = ["smooth", "1strike", "2strike", "3strike", "mid2strike", "recur", "anchor", "anchor_dwrong"]


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml")))
def test_every_preset_composes(compose, preset):
    cfg = compose([f"+experiment={preset}"])
    assert cfg["name"] == preset
    valid = validate_config(cfg)
    assert valid.game.name == cfg["game"]["type"]


def session(valid):
    from games.escape_room.options import session_options

    return session_options(valid.options, valid.groups["schedule"], valid.groups["memory"], valid.agent.name)


@pytest.mark.parametrize("preset", ESCAPE_PRESETS)
def test_escape_presets_validate(compose, preset):
    options = session(validate_config(compose([f"+experiment={preset}"])))
    assert options.games == (10 if preset.startswith("anchor") else 11)
    assert options.memory == ("none" if preset.startswith("anchor") else "transcript")


def test_mid2strike_schedule(compose):
    options = session(validate_config(compose(["+experiment=mid2strike"])))
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
    cfg = compose(["+experiment=smooth"])
    cfg["agent"] = {"name": "oracle"}
    with pytest.raises(ConfigError, match="not available for game 'escape_room'"):
        validate_config(cfg)


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
    err = capsys.readouterr().err
    assert code == 2 and "config error at 'agent.prior_alpha': bad parameters for agent 'bayes'" in err
    code, _ = run_job_dir(["+experiment=trust_game", "agent.return_concentration=0"])
    err = capsys.readouterr().err
    assert code == 2 and "config error at 'agent.return_concentration'" in err and "must be > 0, got 0" in err


@pytest.mark.parametrize(
    ("overrides", "key", "hint"),
    [
        (["+game.coin=2"], "game.coin", "did you mean 'game.coins'"),
        (["+foo=1"], "foo", "unknown key"),
        (["+seeed=1"], "seeed", "did you mean 'seed'"),
        (["+agent.prior_alpah=2"], "agent.prior_alpah", "did you mean 'agent.prior_alpha'"),
        (["+memory.mod=none"], "memory.mod", "did you mean 'memory.mode'"),
        (["+schedule.patern=TTT"], "schedule.patern", "did you mean 'schedule.pattern'"),
        (["+llm.max_concurency=2"], "llm.max_concurency", "unknown key"),
    ],
)
def test_unknown_keys_fail_naming_the_closest_valid_key(run_job_dir, capsys, overrides, key, hint):
    code, run_dir = run_job_dir(["+experiment=mid2strike", "agent=bayes", *overrides])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"config error at '{key}'" in err and hint in err
    assert not (run_dir / "events.jsonl").exists()


def test_unknown_keys_fail_in_every_group_of_every_game(compose):
    cases = (("reliance", "oracle", "limt", "limit"), ("ipd", "ipd_noisy_tit_for_tat", "roundz", "rounds"))
    for preset, agent, typo, key in cases:
        cfg = compose([f"+experiment={preset}", f"agent={agent}", f"+game.{typo}=1"])
        with pytest.raises(ConfigError, match=f"'game.{typo}': unknown key; did you mean 'game.{key}'"):
            validate_config(cfg)
        cfg = compose([f"+experiment={preset}", f"agent={agent}", "+agent.nosie=1"])
        with pytest.raises(ConfigError, match=r"'agent\.nosie': unknown key"):
            validate_config(cfg)


def test_llm_setting_with_a_scripted_agent_is_an_error(run_job_dir, capsys):
    code, _ = run_job_dir(["+experiment=mid2strike", "agent=bayes", "game.verifier=llm"])
    err = capsys.readouterr().err
    assert code == 2 and "config error at 'game.verifier'" in err and "makes no LLM calls" in err


@pytest.mark.slow
def test_ineffective_groups_print_a_warning(run_job_dir, capsys):
    code, run_dir = run_job_dir(["+experiment=reliance", "agent=oracle", "game.limit=1", "memory=ledger"])
    err = capsys.readouterr().err
    assert code == 0 and "warning: 'memory' has no effect in game 'reliance'" in err
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "memory" not in manifest["config"] and manifest["warnings"]
    code, _ = run_job_dir(["+experiment=smooth", "agent=bayes", "model=gpt-5.1"], name="model")
    assert code == 0 and "'model' (gpt-5.1) has no effect" in capsys.readouterr().err


def test_a_changed_schedule_pattern_is_labelled_custom_everywhere(run_job_dir):
    import pandas as pd

    code, run_dir = run_job_dir(["+experiment=mid2strike", "agent=bayes", "schedule.pattern=TTFFT"])
    assert code == 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["cell"]["schedule"] == "custom"
    assert manifest["config"]["schedule"]["name"] == "custom"
    for table in ("games", "decisions", "agent_games", "predictions"):
        frame = pd.read_csv(run_dir / f"{table}.csv")
        if "schedule" in frame:
            assert set(frame.schedule) == {"custom"}, table
    # the same pattern as the named schedule (or a prefix of it with game.games) keeps the name
    code, run_dir = run_job_dir(["+experiment=mid2strike", "agent=bayes", "game.games=5"], name="prefix")
    assert json.loads((run_dir / "manifest.json").read_text())["cell"]["schedule"] == "mid2strike"


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        (["schedule=custom", "schedule.pattern=TTFFT"], "custom-TTFFT"),
        (["schedule.pattern=[1,0,1]"], "custom-TFT"),  # differs from the default schedule (smooth)
        (["schedule=mid2strike"], "default"),  # a named schedule: the name stays
        (["schedule=custom", "schedule.pattern=TTFFT", "name=mine"], "mine"),  # a name set wins
        (["schedule=custom", "schedule.pattern=TTXT"], "default"),  # a bad pattern is validation's to report
        (["game=reliance", "agent=oracle"], "default"),  # a game without run_name
    ],
)
def test_a_job_without_a_name_is_named_by_its_game(compose, overrides, name):
    assert compose(["agent=bayes", *overrides])["name"] == name


@pytest.mark.slow
def test_a_custom_schedule_names_the_run_and_its_directory(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustsim",
            "agent=bayes",
            "schedule=custom",
            "schedule.pattern=TFT",
            "progress=false",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "outputs" / "runs").glob("*/*")
    assert run_dir.name.endswith("_custom-TFT")
    assert json.loads((run_dir / "manifest.json").read_text())["run_id"].startswith("custom-TFT-")


def test_custom_schedule_without_a_pattern_says_it_is_required(run_job_dir, capsys):
    code, _ = run_job_dir(["game=escape_room", "schedule=custom", "agent=bayes"])
    assert code == 2 and "schedule.pattern is required" in capsys.readouterr().err
