"""The calibration command on real engine output: escape room, reliance and arena runs in one sweep."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main


@pytest.mark.slow
def test_all_games_from_the_engine(run_job_dir, tmp_path: Path) -> None:
    for name, over in {
        "esc": ["+experiment=mid2strike", "agent=bayes", "runs=3"],
        "rel": ["+experiment=reliance", "runs=3", "game.limit=20", "agent=random"],
        "ipd": ["+experiment=ipd", "runs=3", "game.opponent=random", "game.noise=0.05"],
    }.items():
        code, _ = run_job_dir(over, f"sweep/{name}")
        assert code == 0, name
    out = tmp_path / "rep"
    assert main(["calibration", str(tmp_path / "sweep"), "--out", str(out), "--resamples", "100"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["game_type"]) == ["arena", "escape_room", "reliance"]
    assert (summary["clusters"] == 3).all() and (summary["n"] > 0).all()
    assert summary["brier_low"].notna().all()
    rel = summary[summary["game_type"] == "reliance"].iloc[0]
    assert rel["n_exact"] > 0  # the reliance posterior gives the noise-free score
    for game in ("arena", "escape_room", "reliance"):
        preds = pd.concat(pd.read_csv(p) for p in (tmp_path / "sweep").rglob("predictions.csv"))
        g = preds[(preds["game_type"] == game) & preds["p"].notna()]
        row = summary[summary["game_type"] == game].iloc[0]
        assert row["n"] == len(g)
        assert row["brier"] == pytest.approx(((g["p"] - g["outcome"]) ** 2).mean(), rel=1e-12)
