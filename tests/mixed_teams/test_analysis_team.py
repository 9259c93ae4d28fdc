"""The trust analysis with mixed teams: team composition is a cell key; per-seat verification measures."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.escape_room.loader import load_trust_data
from analysis.escape_room.pipeline import analyse
from analysis.escape_room.report import write_outputs
from analysis.escape_room.seats import PARTNER, seat_outcomes, seat_verification

BASE = ["+experiment=1strike", "runs=3", "game.games=4"]
TEAM_1 = "A=always_verify;B=always_verify;C=never_verify"
TEAM_2 = "A=never_verify;B=always_verify;C=always_verify"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two compositions of the same agents (only the team key tells them apart) and a default team."""
    from tests.conftest import run_in_process

    root = tmp_path_factory.mktemp("team_runs")
    jobs = {
        "team1": [*BASE, "agent=always_verify", "game.seats.C.agent=never_verify"],
        "team2": [*BASE, "agent=always_verify", "game.seats.A.agent=never_verify"],
        "plain": [*BASE, "agent=always_verify"],
    }
    for name, over in jobs.items():
        assert run_in_process(over, root / name) == 0
    return root


def test_compositions_are_separate_cells(runs) -> None:
    data = load_trust_data([runs])
    teams = sorted(data.runs["team"].unique())
    assert teams == ["", TEAM_1, TEAM_2]
    mixed = data.runs[data.runs["team"] != ""]
    assert set(mixed["agent"]) == {"always_verify+never_verify"} and set(mixed["model"]) == {"scripted"}
    result = analyse([runs], n_resamples=200)
    cell_teams = sorted(c.keys["team"] for c in result.cells)
    assert cell_teams == ["", TEAM_1, TEAM_2]  # same agent, model, schedule, memory: not pooled
    by_team = {c.keys["team"]: c for c in result.cells}
    assert by_team[TEAM_1].n_games == by_team[TEAM_2].n_games == 12
    assert "team " + TEAM_1 in by_team[TEAM_1].label


def test_verification_rate_by_verifier_and_target(runs) -> None:
    data = load_trust_data([runs / "team1"])
    table = seat_verification(data, n_resamples=200)
    assert set(table["team"]) == {TEAM_1}
    assert set(table["verifier"]) == {"always_verify", "never_verify"}
    assert set(table["target"]) == {"always_verify", "never_verify", PARTNER}
    never = table[table["verifier"] == "never_verify"]
    assert (never["verifications"] == 0).all() and (never["rate"] == 0).all()
    # Independent count from decisions.csv: every verification of another seat's puzzle by A or B.
    dec = pd.read_csv(runs / "team1" / "decisions.csv")
    ab = dec[dec["seat"].isin(["A", "B"])]
    checks = ab[(ab["resolved_action"] == "verify") & (ab["target"] != ab["own_puzzle"])]
    always = table[table["verifier"] == "always_verify"]
    assert int(always["verifications"].sum()) == len(checks) > 0
    # Opportunities: each A/B decision × the three other seats of its game.
    assert int(always["opportunities"].sum()) == 3 * len(ab)
    partner = always[always["target"] == PARTNER].iloc[0]
    assert partner["verifications"] == int((checks["verify_partner"]).sum())
    assert partner["rate"] == pytest.approx(partner["verifications"] / len(ab))
    # A and B check each other (always_verify -> always_verify) and C (-> never_verify).
    mates = always[always["target"] == "always_verify"].iloc[0]
    assert mates["opportunities"] == len(ab)  # one teammate of the same agent per decision
    assert 0 <= mates["low"] <= mates["rate"] <= mates["high"] <= 1


def test_report_has_the_per_seat_section(runs, tmp_path) -> None:
    result = analyse([runs], n_resamples=200)
    path = write_outputs(result, tmp_path / "report", figures_on=False)
    text = path.read_text()
    assert "## Mixed teams: whom each player verifies" in text and f"**{TEAM_2}**" in text
    table = pd.read_csv(tmp_path / "report" / "seat_verification.csv", keep_default_na=False)
    assert {"", TEAM_1, TEAM_2} == set(table["team"])
    assert {"verifier", "target", "opportunities", "verifications", "rate", "low", "high"} <= set(
        table.columns
    )


def test_outcomes_by_player(runs) -> None:
    data = load_trust_data([runs / "team1"])
    out = seat_outcomes(data).set_index("player")
    assert set(out.index) == {"always_verify", "never_verify"} and set(out["team"]) == {TEAM_1}
    assert out.loc["always_verify", "seats"] == 2 and out.loc["never_verify", "seats"] == 1
    assert out.loc["always_verify", "seat_games"] == 3 * 4 * 2  # runs x games x seats
    assert out.loc["never_verify", "verifications_per_game"] == 0
    ag = pd.read_csv(runs / "team1" / "agent_games.csv")
    c = ag[ag["seat"] == "C"]
    assert out.loc["never_verify", "survival"] == pytest.approx(c["survived"].mean())
    assert out.loc["never_verify", "score"] == pytest.approx(c["score"].mean())
