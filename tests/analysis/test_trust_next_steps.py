"""The first report says what it cannot show yet and the command that fills it; weak models are named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.escape_room.pipeline import analyse
from analysis.escape_room.report import write_outputs
from tests.analysis.synth import write_run


def _report(tmp_path: Path, *paths: Path) -> str:
    result = analyse(paths, n_resamples=50)
    return write_outputs(result, tmp_path / "report", figures_on=False).read_text()


def _record_command(run: Path, *args: str) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["command"] = ["/x/trustsim/__main__.py", *args, f"hydra.run.dir={run}"]
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_the_default_run_report_names_each_gap_and_its_command(tmp_path: Path) -> None:
    run = write_run(tmp_path / "runs" / "default", schedule="mid2strike", n_games=11, seed=1)
    _record_command(run, "+experiment=mid2strike", "model=m1")
    text = _report(tmp_path, run)
    gaps = text.split("## What this report cannot show yet, and how to get it", 1)[1].split("\n## ", 1)[0]
    assert "`python -m trustsim +experiment=anchor model=m1`" in gaps  # formation and targeting need it
    assert "`python -m trustsim +experiment=smooth model=m1`" in gaps
    assert "`python -m trustsim +experiment=1strike model=m1`" in gaps
    assert "`python -m trustsim -m +experiment=anchor,smooth,1strike model=m1`" in gaps
    # one run cluster: no interval; the report's "How many sessions" section says what to add
    assert "**m1**: 1 of 1 cell(s) have fewer than 3 clusters, so no interval; *How many sessions*" in gaps
    assert "## How many sessions" in text
    assert f"python -m analysis trust {run} NEW_RUN_DIR --out report/" in gaps
    assert "Weak model" not in text
    assert "embedded model" not in gaps  # an API model: no time to estimate


def test_on_the_embedded_model_the_gaps_point_to_a_preview_of_the_time(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "runs" / "local",
        schedule="mid2strike",
        n_games=11,
        seed=1,
        config_extra={"model": {"name": "m1", "provider": "local"}},
    )
    _record_command(run, "+experiment=mid2strike", "model=m1")
    text = _report(tmp_path, run)
    want = "`python -m trustsim -m +experiment=anchor,smooth,1strike model=m1 preview=true` sends nothing"
    assert want in text and "expected time" in text


def test_a_complete_study_has_no_gaps(tmp_path: Path) -> None:
    for schedule, memory in (("anchor", "none"), ("smooth", "transcript"), ("1strike", "transcript")):
        write_run(tmp_path / "runs" / schedule, schedule=schedule, memory=memory, n_games=6, sessions=3)
    text = _report(tmp_path, tmp_path / "runs")
    assert "cannot show yet" not in text and "Δtrust" in text


def test_without_a_recorded_command_the_cell_names_who_played(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", schedule="smooth", memory="summary", n_games=4)
    text = _report(tmp_path, run)
    assert (
        "`python -m trustsim +experiment=anchor model=m1 agent=synth`" in text
    )  # the anchor plays no memory
    assert "`python -m trustsim +experiment=1strike model=m1 agent=synth memory=summary`" in text
    assert "+experiment=smooth " not in text and "in one sweep" not in text


def test_weak_models_are_named_in_the_report(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "a", model="tiny", config_extra={"model": {"name": "tiny", "weak": True}})
    sloppy = write_run(tmp_path / "runs" / "b", model="m2", seed=3)
    write_run(tmp_path / "runs" / "c", model="m3", seed=4)
    decisions = pd.read_csv(sloppy / "decisions.csv", dtype=str, keep_default_na=False)
    mine = decisions.index[decisions["is_partner"] == "false"]
    decisions.loc[mine[: len(mine) // 4 + 1], "valid"] = "false"  # just over 20 % of the model's answers
    decisions.to_csv(sloppy / "decisions.csv", index=False)
    text = _report(tmp_path, tmp_path / "runs")
    weak = text.split("## ⚠ Weak model", 1)[1].split("\n## ", 1)[0]
    assert "**tiny**: tiny is flagged weak (model.weak: true) (1 of 1 run(s) labelled weak)" in weak
    assert "**m2**:" in weak and "were invalid" in weak
    assert "m3" not in weak
    runs = pd.read_csv(tmp_path / "report" / "runs.csv", keep_default_na=False)
    assert set(runs.loc[runs["weak"] != "", "model"]) == {"tiny", "m2"}
