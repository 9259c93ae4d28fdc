"""Trust-game analysis: the spec's worked example (specs/trust_game.md), repeated-play measures, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.trust_game.measures import (
    breakdown_rounds,
    check_exchanges,
    low_return_response,
    measures,
    ols_slope,
)
from analysis.trust_game.references import berg_fractions, comparisons

WORKED = [
    (10, 15),
    (5, 5),
    (0, 0),
    (4, 0),
]  # (s, r) of the spec's four one-shot pairs, E = 10, k = 3, E_t = 10


def _rows(amounts: list[list[tuple[int, int]]], run_id: str = "r1") -> pd.DataFrame:
    rows = []
    for pair, rounds in enumerate(amounts, start=1):
        for rnd, (s, r) in enumerate(rounds, start=1):
            rows.append(
                {
                    "run_id": run_id,
                    "session": 0,
                    "pair": pair,
                    "round": rnd,
                    "rounds": len(rounds),
                    "trustor": "a",
                    "trustor_model": "scripted",
                    "trustee": "b",
                    "trustee_model": "scripted",
                    "endowment": 10,
                    "trustee_endowment": 10,
                    "multiplier": 3,
                    "horizon": "known",
                    "history": "own",
                    "sent": s,
                    "received": 3 * s,
                    "returned": r,
                    "trustor_payoff": 10 - s + r,
                    "trustee_payoff": 10 + 3 * s - r,
                    "valid": True,
                }
            )
    return pd.DataFrame(rows)


def _run_dir(root: Path, df: pd.DataFrame, name: str = "run") -> Path:
    run = root / name
    run.mkdir(parents=True)
    run_id = str(df["run_id"].iloc[0])
    (run / "manifest.json").write_text(
        json.dumps({"run_id": run_id, "game": "trust_game", "status": "complete"})
    )
    (run / "events.jsonl").write_text("")
    df.to_csv(run / "exchanges.csv", index=False)
    return run


def test_worked_example_measures() -> None:
    df = check_exchanges(_rows([[x] for x in WORKED]))
    m = measures(df, n=500)
    assert m["sent_fraction"].estimate == pytest.approx(0.475)  # 19/40
    assert m["return_ratio_mean"].estimate == pytest.approx((0.5 + 1 / 3 + 0) / 3)  # 0.2778
    assert round(m["return_ratio_mean"].estimate, 4) == 0.2778
    assert m["return_ratio_pooled"].estimate == pytest.approx(20 / 57)  # 0.3509
    assert m["efficiency"].estimate == pytest.approx(0.475)  # 2*19 / (2*10*4)
    assert m["reciprocity_slope"].estimate == pytest.approx(80 / 50.75)  # Sxy / Sxx
    assert round(m["reciprocity_slope"].estimate, 4) == 1.5764
    assert m["trustor_payoff"].estimate == pytest.approx(10.25)
    assert m["trustee_payoff"].estimate == pytest.approx(19.25)
    assert m["sent_fraction"].has_interval and m["sent_fraction"].low <= 0.475 <= m["sent_fraction"].high
    assert m["reciprocity_slope"].has_interval


def test_worked_example_through_the_cli(tmp_path: Path) -> None:
    _run_dir(tmp_path / "runs", _rows([[x] for x in WORKED]))
    code = main(
        ["trust_game", str(tmp_path / "runs"), "--out", str(tmp_path / "report"), "--resamples", "300"]
    )
    assert code == 0
    s = pd.read_csv(tmp_path / "report" / "summary.csv").iloc[0]
    expected = {"sent_fraction": 0.475, "return_ratio_mean": 0.2778, "return_ratio_pooled": 0.3509,
                "efficiency": 0.475, "reciprocity_slope": 1.5764, "trustor_payoff": 10.25, "trustee_payoff": 19.25}  # fmt: skip
    for name, value in expected.items():
        assert round(float(s[name]), 4) == value, name
    assert s["pairs"] == 4 and s["exchanges"] == 4
    report = (tmp_path / "report" / "report.md").read_text()
    assert "0.475" in report and "1.576" in report and "Berg" in report and "Johnson & Mislin" in report
    for fig in ("sent_distribution.png", "return_vs_sent.png", "sent_distribution.pdf"):
        assert (tmp_path / "report" / fig).stat().st_size > 0
    refs = pd.read_csv(tmp_path / "report" / "reference_comparison.csv")
    berg = refs[refs["measure"] == "sent fraction (first round)"].iloc[0]
    assert berg["reference_value"] == pytest.approx(165 / 320) and berg["value"] == pytest.approx(0.475)
    assert berg["difference"] == pytest.approx(0.475 - 165 / 320)


def test_repeated_play_measures() -> None:
    # pair 1: trust grows after good returns; pair 2: a low return, then trust breaks down in round 3
    df = check_exchanges(
        _rows([[(5, 10), (8, 12), (10, 15)], [(6, 3), (2, 0), (0, 0)], [(4, 4), (4, 4), (5, 5)]])
    )
    low = low_return_response(df, n=300).iloc[0]
    # after r < s: pair 2 rounds 1, 2 → Δs/E = -0.4, -0.2; after r ≥ s: pair 1 (+0.3, +0.2), pair 3 (0, +0.1)
    assert low["after_low_n"] == 2 and low["after_low"] == pytest.approx(-0.3)
    assert low["after_ok_n"] == 4 and low["after_ok"] == pytest.approx(0.15)
    assert low["difference"] == pytest.approx(-0.45)
    b = breakdown_rounds(df).set_index("cluster")["breakdown_round"]
    assert b["r1/0/2"] == 3 and b.isna().sum() == 2
    assert ols_slope([10, 5, 0, 4], [15, 5, 0, 0]) == pytest.approx(1.5764, abs=1e-4)


def test_reference_data_and_bad_input(tmp_path: Path, capsys) -> None:
    f = berg_fractions()
    assert len(f) == 32 and 10 * f.mean() == pytest.approx(5.16, abs=0.01) and (f > 0).sum() == 30
    df = check_exchanges(_rows([[x] for x in WORKED]))
    refs = comparisons(df, ["trustor"], n=200)
    assert set(refs["reference"].str.split(",").str[0]) == {
        "Berg",
        "Johnson & Mislin 2011 meta-analysis (approximate)",
    }
    bad = _rows([[(4, 13)]])
    _run_dir(tmp_path / "bad", bad)
    assert main(["trust_game", str(tmp_path / "bad"), "--out", str(tmp_path / "o")]) == 2
    assert "outside" in capsys.readouterr().err
    assert main(["trust_game", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2


def test_analysis_of_real_runs(run_job_dir, tmp_path: Path) -> None:
    run_job_dir(["+experiment=trust_game_repeated", "agent=tg_random", "game.pairs=8"], "runs/a")
    run_job_dir(["+experiment=trust_game", "game.pairs=30"], "runs/b")
    out = tmp_path / "report"
    assert main(["trust_game", str(tmp_path / "runs"), "--out", str(out), "--resamples", "200"]) == 0
    s = pd.read_csv(out / "summary.csv")
    assert len(s) == 2 and set(s["variant"]) == {"one_shot", "repeated"}
    rounds = pd.read_csv(out / "per_round.csv")
    assert rounds[rounds["variant"] == "repeated"]["round"].max() == 10
    assert (out / "per_round.png").exists() and "Repeated play" in (out / "report.md").read_text()
