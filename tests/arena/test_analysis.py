"""Arena analysis: measures on hand-made matches, and the CLI on a real tournament run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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
    t = tournament_table(per_match(pd.DataFrame(rows)), n_resamples=50, min_matches=1)
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


@pytest.mark.slow
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
    err = capsys.readouterr().err
    assert "no arena run" in err and str(tmp_path) in err


def test_tables_split_by_varying_settings() -> None:
    a = pd.DataFrame(_moves("CCCC", "CCCC", "m1", "tft", "coop")).assign(temptation=5.0)
    b = pd.DataFrame(_moves("CDDD", "DDDD", "m2", "tft", "defect")).assign(temptation=12.0)
    t = tournament_table(per_match(pd.concat([a, b])), n_resamples=20, min_matches=1)
    assert t["temptation"].tolist() == [5.0, 5.0, 12.0, 12.0] and t["rank"].tolist() == [1, 2, 1, 2]
    tft12 = t[(t["player"] == "tft") & (t["temptation"] == 12.0)].iloc[0]
    assert tft12["payoff_per_round"] == pytest.approx(3 / 4)


def _field(n_matches: dict[str, int], rounds: int = 20) -> pd.DataFrame:
    """Each player meets a defector ``n`` times; a cooperator scores 0, a defector 1, a mixer between."""
    rows: list[dict] = []
    moves = {"coop": "C" * rounds, "defect": "D" * rounds, "mixer": "CD" * (rounds // 2)}
    for player, n in n_matches.items():
        for i in range(n):
            rows += _moves(moves[player], "D" * rounds, f"{player}{i}", player, "defect")
    return pd.DataFrame(rows)


def test_underpowered_entries_are_listed_but_not_ranked() -> None:
    """One short match must not outrank a player with many (issue 17 item 5): n, intervals, a flag."""
    pm = per_match(_field({"coop": 12, "mixer": 1}))
    pm = pm[pm["seat"] == "A"]
    t = tournament_table(pm, n_resamples=200)
    mixer = t[t["player"] == "mixer"].iloc[0]
    coop = t[t["player"] == "coop"].iloc[0]
    assert mixer["payoff_per_round"] > coop["payoff_per_round"]  # better estimate, from one match
    assert not mixer["ranked"] and pd.isna(mixer["rank"])
    assert mixer["note"] == "underpowered: 1 match (< 10), not ranked; 1 match (< 3): no intervals"
    assert coop["ranked"] and coop["rank"] == 1 and coop["matches"] == 12
    assert t["player"].tolist() == ["coop", "mixer"]  # ranked entries first
    assert tournament_table(pm, n_resamples=50, min_matches=1)["player"].tolist() == ["mixer", "coop"]


def test_rank_intervals_cover_the_rank_and_separate_clear_winners() -> None:
    rows = _field({"coop": 10, "defect": 10, "mixer": 10})
    pm = per_match(rows)
    pm = pm[pm["seat"] == "A"]
    t = tournament_table(pm, n_resamples=200).set_index("player")
    # deterministic players: every resample ranks them the same, so the intervals are single ranks
    assert t.loc["defect", ["rank", "rank_low", "rank_high"]].tolist() == [1, 1, 1]
    assert t.loc["coop", ["rank", "rank_low", "rank_high"]].tolist() == [3, 3, 3]
    assert (t["rank_low"] <= t["rank"]).all() and (t["rank"] <= t["rank_high"]).all()


def test_rank_interval_widens_when_entries_overlap() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for player in ("p", "q"):
        for i in range(12):
            a = "".join(rng.choice(["C", "D"], 20))
            rows += _moves(a, "D" * 20, f"{player}{i}", player, "defect")
    pm = per_match(pd.DataFrame(rows))
    t = tournament_table(pm[pm["seat"] == "A"], n_resamples=400)
    assert t["rank_low"].tolist() == [1, 1] and t["rank_high"].tolist() == [2, 2]


@pytest.mark.slow
def test_cli_report_flags_the_single_match_entry(tmp_path: Path, capsys) -> None:
    rows = _field({"coop": 12, "mixer": 1})
    rows["seat"] = rows["seat"].where(rows["player"] != "defect", "B")
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    rows.to_csv(run / "moves.csv", index=False)
    (run / "manifest.json").write_text(json.dumps({"run_id": "r", "game": "arena", "status": "complete"}))
    out = tmp_path / "rep"
    assert main(["arena", str(tmp_path / "runs"), "--out", str(out), "--resamples", "50"]) == 0
    assert "1 underpowered entry not ranked" in capsys.readouterr().out
    report = (out / "report.md").read_text()
    assert "| — | mixer | scripted | 1 | 20 |" in report
    assert "mixer (scripted): underpowered: 1 match (< 10), not ranked" in report
    table = pd.read_csv(out / "tournament.csv")
    assert {"rank_low", "rank_high", "ranked", "note", "matches", "rounds_per_match"} <= set(table.columns)
