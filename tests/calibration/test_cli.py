"""The calibration command on synthetic escape-room, reliance and arena run directories."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.calibration import scores
from tests.calibration.synthetic import arena_rows, escape_rows, reliance_rows, write_run


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    root = tmp_path / "sweep"
    write_run(root, "esc1", "escape_room", escape_rows("esc1", rng))
    write_run(root, "rel1", "reliance", reliance_rows("rel1", rng))
    write_run(root, "ipd1", "arena", arena_rows("ipd1", rng))
    extracted = escape_rows("ext1", rng, model="m1")
    for r in extracted:
        r["source"] = "extracted:smollm2"
    write_run(root, "ext1", "escape_room", extracted)
    write_run(root, "broken", "arena", arena_rows("broken", rng), status="failed")
    return root


@pytest.mark.slow
def test_report_written_with_all_games(sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "report"
    assert main(["calibration", str(sweep), "--out", str(out), "--resamples", "200"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    groups = set(zip(summary["source"], summary["game_type"], strict=True))
    assert groups == {
        ("native", "escape_room"),
        ("native", "reliance"),
        ("native", "arena"),
        ("extracted:smollm2", "escape_room"),
    }
    # the failed run is excluded and named in the report
    text = (out / "report.md").read_text()
    assert "broken" in text and "status 'failed'" in text
    # arena numbers recomputed by hand; missing escape-room confidences counted, not scored
    esc = pd.read_csv(sweep / "esc1" / "predictions.csv")
    row = summary[(summary["game_type"] == "escape_room") & (summary["source"] == "native")].iloc[0]
    stated = esc[esc["p"].notna()]
    assert row["missing"] == esc["p"].isna().sum() > 0
    assert row["brier"] == pytest.approx(scores.brier(stated["p"], stated["outcome"]))
    assert row["brier_low"] <= row["brier"] <= row["brier_high"]
    assert row["clusters"] == 4
    arena = summary[summary["game_type"] == "arena"].iloc[0]
    ipd = pd.read_csv(sweep / "ipd1" / "predictions.csv")
    assert arena["bias"] == pytest.approx(0.5 - ipd["outcome"].mean())
    rel = summary[summary["game_type"] == "reliance"].iloc[0]
    assert rel["n_exact"] == 100 and rel["bias_exact"] > 0
    for name in ("summary", "by_subject", "by_schedule", "by_round", "reliability"):
        assert (out / f"{name}.csv").exists()
    assert list(out.glob("reliability_*.png")) and (out / "expected_vs_met.png").exists()
    assert "scored pairs" in capsys.readouterr().out


@pytest.mark.slow
def test_by_subject_separates_partner(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    main(["calibration", str(sweep / "esc1"), "--out", str(out), "--resamples", "50"])
    by = pd.read_csv(out / "by_subject.csv")
    assert sorted(by["subject"]) == ["A", "B", "C", "D"]
    d = by[by["subject"] == "D"].iloc[0]
    a = by[by["subject"] == "A"].iloc[0]
    esc = pd.read_csv(sweep / "esc1" / "predictions.csv")
    stated_d = esc[(esc["subject"] == "D") & esc["p"].notna()]
    assert d["observed"] == pytest.approx(stated_d["outcome"].mean()) and d["observed"] < 1
    assert a["observed"] == pytest.approx(1.0)


@pytest.mark.slow
def test_reliability_bins_cover_all_pairs(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    main(["calibration", str(sweep / "ipd1"), "--out", str(out), "--resamples", "50"])
    bins = pd.read_csv(out / "reliability.csv")
    for _, g in bins.groupby("strategy"):
        assert g["count"].sum() == 120


@pytest.mark.slow
def test_source_filter_and_deterministic(sweep: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        main(["calibration", str(sweep), "--out", str(out), "--source", "native", "--resamples", "100"])
    sa, sb = pd.read_csv(a / "summary.csv"), pd.read_csv(b / "summary.csv")
    assert set(sa["source"]) == {"native"}
    pd.testing.assert_frame_equal(sa, sb)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda df: df.assign(p=1.5), "outside"),
        (lambda df: df.assign(outcome=2), "not 0 or 1"),
        (lambda df: df.drop(columns=["cluster"]), "cluster"),
        (lambda df: df.assign(p="high"), "non-numeric"),
    ],
)
def test_bad_files_give_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture, edit, message: str
) -> None:
    rng = np.random.default_rng(1)
    d = write_run(tmp_path / "s", "x", "arena", arena_rows("x", rng))
    df = pd.read_csv(d / "predictions.csv")
    edit(df).to_csv(d / "predictions.csv", index=False)
    assert main(["calibration", str(d), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_no_runs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["calibration", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no run directories" in capsys.readouterr().err


@pytest.mark.slow
def test_breakdown_with_too_many_levels_is_skipped(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert (
        main(
            ["calibration", str(sweep / "esc1"), "--out", str(out), "--resamples", "20", "--max-groups", "3"]
        )
        == 0
    )
    assert not (out / "by_subject.csv").exists()  # A, B, C, D: 4 levels
    assert (out / "by_round.csv").exists()  # 2 levels
    assert "by_subject: 4 levels > --max-groups 3" in (out / "report.md").read_text()


@pytest.mark.slow
def test_duplicate_run_ids_counted_once(sweep: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(sweep / "ipd1", copy / "ipd1-again")
    out = tmp_path / "r"
    assert main(["calibration", str(sweep / "ipd1"), str(copy), "--out", str(out), "--resamples", "20"]) == 0
    assert pd.read_csv(out / "summary.csv")["n"].tolist() == [120]
    assert "duplicate of run ipd1" in (out / "report.md").read_text()


@pytest.mark.slow
def test_long_matches_get_round_ranges(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    run = write_run(tmp_path / "s", "long", "arena", arena_rows("long", rng, n_matches=4, rounds=150))
    out = tmp_path / "r"
    assert main(["calibration", str(run), "--out", str(out), "--resamples", "20"]) == 0
    by_round = pd.read_csv(out / "by_round.csv", dtype={"round": str})
    assert by_round["round"].tolist()[:2] == ["001-015", "016-030"] and by_round["n"].sum() == 600


@pytest.mark.slow
def test_scripted_forecasters_are_not_pooled(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = arena_rows("a", rng)
    for r in rows[:60]:
        r.update(model="scripted", agent="ipd_forecasting_tit_for_tat")
    for r in rows[60:]:
        r.update(model="scripted", agent="other_forecaster")
    run = write_run(tmp_path / "s", "a", "arena", rows)
    out = tmp_path / "r"
    assert main(["calibration", str(run), "--out", str(out), "--resamples", "20"]) == 0
    models = sorted(pd.read_csv(out / "summary.csv")["model"])
    assert models == ["scripted:ipd_forecasting_tit_for_tat", "scripted:other_forecaster"]


@pytest.mark.slow
def test_breakdown_by_swept_cell_keys(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    for t in (5, 12):
        cell = {"temptation": t, "horizon": "announced", "model": "m2"}
        write_run(tmp_path / "sw", f"ipd-t{t}", "arena", arena_rows(f"ipd-t{t}", rng), cell=cell)
    out = tmp_path / "r"
    assert main(["calibration", str(tmp_path / "sw"), "--out", str(out), "--resamples", "20"]) == 0
    by = pd.read_csv(out / "by_temptation.csv")
    assert sorted(by["cell:temptation"]) == [5, 12] and (by["n"] == 120).all()
    assert not (out / "by_horizon.csv").exists()  # did not vary
    assert "## By temptation" in (out / "report.md").read_text()


@pytest.mark.slow
def test_numeric_levels_are_in_numeric_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    rows = escape_rows("g", rng, n_sessions=3)
    for r in rows:  # games 1..5 become 1, 2, 10, 11, 12: as text 10 < 11 < 12 < 2
        r["game"] = {3: 10, 4: 11, 5: 12}.get(r["game"], r["game"])
    run = write_run(tmp_path / "s", "g", "escape_room", rows)
    out = tmp_path / "r"
    assert main(["calibration", str(run), "--out", str(out), "--resamples", "20"]) == 0
    assert pd.read_csv(out / "by_game.csv")["game"].tolist() == [1, 2, 10, 11, 12]
