"""Plans for the other families' headline measures: arena, trust game, reliance, calibration (Brier)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from trustsim import api


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("families")
    jobs = {
        "ipd": ("ipd", ["runs=4", "game.rounds=8"]),  # forecasting tit-for-tat states P(opponent cooperates)
        "noisy": ("ipd", ["runs=4", "game.rounds=8", "agent=ipd_noisy_tit_for_tat"]),
        "tg": ("trust_game", ["runs=3", "game.pairs=6"]),
        "rel": ("reliance", ["runs=3", "game.limit=12", "agent=random"]),
    }
    for name, (experiment, overrides) in jobs.items():
        assert api.run(experiment, [*overrides, "progress=false"], run_dir=root / name).status == "complete"
    return {name: root / name for name in jobs}


def plan(tmp_path: Path, *args: str) -> pd.DataFrame:
    assert main(["plan", *args, "--out", str(tmp_path / "p"), "--resamples", "200"]) == 0
    return pd.read_csv(tmp_path / "p" / "plan.csv")


def test_arena_cooperation_clusters_matches(runs, tmp_path):
    frame = plan(tmp_path, str(runs["noisy"]), "--measure", "cooperation", "--width", "0.05")
    row = frame[frame["player"] == "noisy_tit_for_tat"].iloc[0]
    assert row["design"] == "unit" and row["sessions_now"] == 4 and row["units_per_session"] == 1
    assert row["estimate"] == pytest.approx(row["estimate"]) and 0 < row["estimate"] <= 1
    assert row["runs"] >= 1 and "+experiment=ipd" in row["overrides"]


def test_trust_game_shares_cluster_pairs(runs, tmp_path):
    sent = plan(tmp_path, str(runs["tg"]), "--measure", "sent_share", "--width", "0.05").iloc[0]
    assert sent["design"] == "unit" and sent["units_per_session"] == 6 and sent["df"] == 17
    assert sent["trustor"] == "tg_human" and 0 < sent["estimate"] < 1 and sent["runs"] >= 1
    returned = plan(tmp_path, str(runs["tg"]), "--measure", "returned_share", "--width", "0.05").iloc[0]
    assert 0 < returned["estimate"] < 1


def test_reliance_blueprints_are_a_floor(runs, tmp_path):
    frame = plan(tmp_path, str(runs["rel"]), "--measure", "accuracy", "--width", "0.2")
    row = frame.iloc[0]
    assert row["system"] == "random" and row["design"] == "item" and row["sessions_now"] == 3
    stages = pd.read_csv(runs["rel"] / "stages.csv")
    assert row["units_per_session"] == stages["blueprint"].nunique()  # each session replays every blueprint
    assert row["floor_var"] >= 0 and row["per_session_var"] > 0  # the floor: tests/plan/test_design.py
    regret = plan(tmp_path, str(runs["rel"]), "--measure", "regret", "--width", "0.2").iloc[0]
    assert regret["design"] == "item" and math.isfinite(regret["estimate"])


def test_brier_follows_the_prediction_clusters(runs, tmp_path):
    frame = plan(tmp_path, str(runs["ipd"]), str(runs["rel"]), "--measure", "brier", "--width", "0.05")
    designs = dict(zip(frame["game_type"], frame["design"], strict=True))
    assert designs == {"arena": "unit", "reliance": "session"}  # arena: a match; reliance: a session
    assert (frame["estimate"].between(0, 1)).all()
