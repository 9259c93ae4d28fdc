"""Arena analysis: measures on hand-made matches, and the CLI on a real tournament run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.arena.measures import per_match
from analysis.arena.tables import tournament_table


def _moves(a: str, b: str, match: str = "m1", pa: str = "x", pb: str = "y") -> list[dict]:
    rows = []
    pay = {("C", "C"): (3, 3), ("C", "D"): (0, 5), ("D", "C"): (5, 0), ("D", "D"): (1, 1)}
    for t, (x, y) in enumerate(zip(a, b, strict=True), start=1):
        px, py = pay[(x, y)]
        base = {"run_id": "r", "match": match, "round": t, "model": "scripted"}
        rows.append(
            {**base, "seat": "A", "player": pa, "opponent": pb, "move": x, "opponent_move": y, "payoff": px}
        )
        rows.append(
            {**base, "seat": "B", "player": pb, "opponent": pa, "move": y, "opponent_move": x, "payoff": py}
        )
    return rows


def test_retaliation_forgiveness_first_defection() -> None:
    # x: C C D C C ; y: C D C C C -> x is exploited at t=2, retaliates at 3, y came back at 3, x forgives at 4
    pm = per_match(pd.DataFrame(_moves("CCDCC", "CDCCC")))
    x = pm[pm["seat"] == "A"].iloc[0]
    assert (x["ret_num"], x["ret_den"]) == (1, 1)
    assert (x["for_num"], x["for_den"]) == (1, 1)
    assert x["first_defection"] == 3 and x["coop"] == 4 and x["mutual"] == 3
    assert x["payoff"] == 3 + 0 + 5 + 3 + 3
    y = pm[pm["seat"] == "B"].iloc[0]
    assert (
        y["first_defection"] == 2 and y["ret_den"] == 1 and y["ret_num"] == 0
    )  # y did not answer x's D at t=3


def test_never_defecting_player() -> None:
    pm = per_match(pd.DataFrame(_moves("CCCC", "DDDD")))
    x = pm[pm["seat"] == "A"].iloc[0]
    assert pd.isna(x["first_defection"]) and x["defected"] == 0
    assert (x["ret_num"], x["ret_den"]) == (0, 3)  # the last round has no next move


def test_tournament_table_pools_matches_per_player() -> None:
    rows = _moves("CCCC", "CCCC", "m1", "tft", "coop") + _moves("CDDD", "DDDD", "m2", "tft", "defect")
    t = tournament_table(per_match(pd.DataFrame(rows)), n_resamples=50)
    tft = t[t["player"] == "tft"].iloc[0]
    assert tft["matches"] == 2 and tft["payoff_per_round"] == pytest.approx((12 + 3) / 8)
    assert t["rank"].tolist() == [1, 2, 3] and t["player"].tolist() == ["coop", "defect", "tft"]


def test_bad_moves_file() -> None:
    rows = _moves("CC", "CC")
    rows[0]["move"] = "X"
    with pytest.raises(ValueError, match="not C or D"):
        per_match(pd.DataFrame(rows))
    with pytest.raises(ValueError, match="lacks"):
        per_match(pd.DataFrame(rows).drop(columns="payoff"))


def test_cli_on_tournament_run(run_job_dir, tmp_path: Path, capsys) -> None:
    code, run = run_job_dir(["+experiment=ipd_tournament", "game.rounds=12", "runs=2", "game.noise=0.05"])
    assert code == 0
    out = tmp_path / "rep"
    assert main(["arena", str(run), "--out", str(out), "--resamples", "100"]) == 0
    table = pd.read_csv(out / "tournament.csv")
    matches = pd.read_csv(run / "matches.csv")
    assert len(table) == 10 and set(table["matches"]) == {2 * 9}
    for player, g in table.groupby("player"):
        as_a = matches[matches["player_a"] == player]
        as_b = matches[matches["player_b"] == player]
        total = as_a["payoff_a"].sum() + as_b["payoff_b"].sum()
        rounds = as_a["rounds"].sum() + as_b["rounds"].sum()
        assert g["payoff_per_round"].iloc[0] == pytest.approx(total / rounds), player
        assert (
            g["payoff_per_round_low"].iloc[0]
            <= g["payoff_per_round"].iloc[0]
            <= g["payoff_per_round_high"].iloc[0]
        )
    for name in ("pairs.csv", "payoff_matrix.csv", "per_match.csv", "match_grid.png", "report.md"):
        assert (out / name).exists(), name
    assert "Tournament table" in (out / "report.md").read_text()


def test_cli_rejects_non_arena(tmp_path: Path, capsys) -> None:
    run = tmp_path / "esc"
    run.mkdir()
    (run / "manifest.json").write_text(
        json.dumps({"run_id": "e", "game": "escape_room", "status": "complete"})
    )
    assert main(["arena", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no arena run" in capsys.readouterr().err


def test_tables_split_by_varying_settings() -> None:
    a = pd.DataFrame(_moves("CCCC", "CCCC", "m1", "tft", "coop")).assign(temptation=5.0)
    b = pd.DataFrame(_moves("CDDD", "DDDD", "m2", "tft", "defect")).assign(temptation=12.0)
    t = tournament_table(per_match(pd.concat([a, b])), n_resamples=20)
    assert t["temptation"].tolist() == [5.0, 5.0, 12.0, 12.0] and t["rank"].tolist() == [1, 2, 1, 2]
    tft12 = t[(t["player"] == "tft") & (t["temptation"] == 12.0)].iloc[0]
    assert tft12["payoff_per_round"] == pytest.approx(3 / 4)
