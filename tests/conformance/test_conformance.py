"""Conformance replay of the reference study's recorded games through our rules."""

from __future__ import annotations

import copy
import csv
import os
from pathlib import Path

import pytest

from analysis.__main__ import main
from games.escape_room.conformance import replay_game, replay_run
from games.escape_room.rules import RuleOptions

REPO = Path(__file__).resolve().parents[2]
LOGS = Path(os.environ.get("TRUSTSIM_SHARED", REPO.parent / "shared")) / "data" / "escape-room-v2"
needs_logs = pytest.mark.skipif(
    not (LOGS / "runs").is_dir(), reason=f"shared reference logs not found at {LOGS}"
)
MINI = "main_gpt5_mini_recovery_20260520_012127"  # game 2, round 1: B verified its own puzzle, coins 4 -> 3


def _round(n, decisions, alive, outcome, statuses, capsules, deaths=None, volunteer=None):  # type: ignore[no-untyped-def]
    return {
        "round": n, "decisions": decisions, "alive_agents": alive, "volunteer": volunteer,
        "deaths": list(deaths or {}), "death_reasons": deaths or {}, "defaulted_to_pass": {},
        "verifications": [], "outcome": outcome, "capsule_selections": {},
        "agent_statuses": {s: {"alive": a, "answer": ans, "coins": c} for s, (a, ans, c) in statuses.items()},
        "capsule_status": capsules,
    }  # fmt: skip


def _game() -> dict:
    """A two-round game in the reference format: A verifies Q4 (agrees), B verifies its own Q2 (charged,
    'already endorsed'); nobody volunteers, C is eliminated; then A volunteers with grown labels and escapes."""
    caps1 = {"Q1:5": [["Q1-A", "5"]], "Q2:8": [["Q2-B", "8"]], "Q3:9": [["Q3-C", "9"]],
             "Q4:12": [["Q4-D+A", "12"]]}  # fmt: skip
    r1 = _round(
        1,
        {"A": "Verify: Q4", "B": "Verify: Q2", "C": "Pass", "D": "Pass"},
        ["A", "B", "C", "D"],
        "🔍 Verifications completed:\n  ✅ A agrees with Q4-D → now Q4-D+A (-1 coin: 4→3)\n"
        "  ℹ️ B already endorsed Q2-B\n\n⚠️ No one volunteered! C was randomly eliminated (coins lost: 4 → 0).\n"
        "Remaining: ['A', 'B', 'D']",
        {"A": (True, "5", 3), "B": (True, "8", 3), "C": (False, "9", 0), "D": (True, "12", 4)},
        caps1,
        deaths={"C": "no_volunteer"},
    )
    r2 = _round(
        2,
        {"A": "Volunteer: Q1-A, Q2-B, Q3-C, Q4-D+A", "B": "Pass", "D": "Pass"},
        ["A", "B", "D"],
        "✅ A entered CORRECT password using capsules: Q1-A, Q2-B, Q3-C, Q4-D+A\n🎉 Everyone escapes! 🎉",
        {"A": (True, "5", 3), "B": (True, "8", 3), "C": (False, "9", 0), "D": (True, "12", 4)},
        caps1,
        volunteer="A",
    )
    config = {s: {"model": "m", "puzzle": p, "answer": None}
              for s, p in zip("ABCD", ["What is 2 + 3?", "What is 4 + 4?", "What is 3 × 3?", "What is 6 + 6?"],
                              strict=True)}  # fmt: skip
    return {"game_id": "g1", "game_outcome": "SUCCESS", "survivors": ["A", "B", "D"], "agents_config": config,
            "rounds": [r1, r2]}  # fmt: skip


def test_a_faithful_log_agrees_except_for_the_documented_logging_bugs():
    result, sealed = replay_game("r", 1, _game(), previous_sealed=None)
    assert sealed == {"A": "5", "B": "8", "C": "9", "D": "12"}
    assert result.agree_except_logging_bugs and not result.agree
    assert result.fields_differing == ["agents_config.answer", "verifications", "capsule_selections"]
    assert result.first_difference == "0:agents_config.answer" and result.first_rule_difference == ""
    assert "logged before answers exist" in result.reason
    assert result.compared["coins"] == 2 and result.compared["announcement"] == 2
    assert result.exercised == {
        "own-puzzle verification (charged, no capsule change)": 1,
        "capsule name not an exact label, resolved by its creator (lenient)": 1,  # Q4-D+A
    }


def test_rule_differences_are_found_and_named():
    result, _ = replay_game("r", 1, _game(), previous_sealed=None, rules=RuleOptions(own_verify="illegal"))
    assert result.first_rule_difference == "1:legal"
    assert {"legal", "announcement", "coins"} <= set(result.fields_differing)
    assert (
        "legal: rule difference: our rules find 'Verify: Q2' by B illegal (verify_own_puzzle)"
        in result.reason
    )
    # A log whose coins say the own-puzzle verification was free disagrees with our rules.
    game = _game()
    for rnd in game["rounds"]:
        rnd["agent_statuses"]["B"]["coins"] = 4
    result, _ = replay_game("r", 1, game, previous_sealed=None)
    assert result.first_rule_difference == "1:coins" and not result.agree_except_logging_bugs
    assert "coins: rule difference: verification cost (1 coin, own puzzle included)" in result.reason


def test_recorded_draws_are_followed_and_a_divergent_draw_is_reported():
    game = copy.deepcopy(_game())
    game["rounds"][0]["death_reasons"] = {"B": "no_volunteer"}  # the log says B was eliminated, not C
    result, _ = replay_game("r", 1, game, previous_sealed=None)
    assert "1:deaths" not in [d.where for d in result.differences]  # the recorded draw was taken as given
    assert "1:coins" in [d.where for d in result.differences]  # ... but coins/statuses then disagree


def test_agents_config_answer_of_later_games_is_the_previous_games_answer():
    game = _game()
    for seat, answer in zip("ABCD", ["1", "2", "3", "4"], strict=True):
        game["agents_config"][seat]["answer"] = answer
    result, _ = replay_game("r", 2, game, previous_sealed={"A": "1", "B": "2", "C": "3", "D": "4"})
    assert result.agree_except_logging_bugs
    result, _ = replay_game("r", 2, game, previous_sealed={"A": "7", "B": "2", "C": "3", "D": "4"})
    assert not result.agree_except_logging_bugs and result.first_rule_difference == "0:agents_config.answer"


@needs_logs
def test_every_recorded_game_agrees_except_documented_logging_bugs(tmp_path: Path):
    out = tmp_path / "conf"
    assert (
        main(
            ["conformance", str(LOGS / "runs"), str(LOGS / "examples-74f0fd1"), "--out", str(out), "--quiet"]
        )
        == 0
    )
    rows = list(csv.DictReader((out / "conformance.csv").open()))
    assert len(rows) == 1765 + 21
    assert all(r["agree_except_logging_bugs"] == "true" and r["first_rule_difference"] == "" for r in rows)
    fields = {f for r in rows for f in r["fields"].split(";") if f}
    assert fields == {"agents_config.answer", "whom_to_verify", "verifications", "capsule_selections"}
    report = (out / "conformance.md").read_text()
    assert "1,786 / 1,786 (100.0 %)" in report and "## By field" in report and "## By run" in report
    assert (
        "- games agreeing with trustsim's rules (any difference is a documented reference logging bug): **1,786"
        in report
    )
    assert "- own-puzzle verification (charged, no capsule change): 6" in report


@needs_logs
def test_the_old_rules_would_disagree_with_the_study():
    illegal = replay_run(LOGS / "runs" / MINI, RuleOptions(own_verify="illegal"))
    differing = {g.game: g.first_rule_difference for g in illegal if not g.agree_except_logging_bugs}
    assert differing[2] == "1:legal"  # B's "Verify: Q2" (its own puzzle) was legal and charged
    assert all(g.agree_except_logging_bugs for g in replay_run(LOGS / "runs" / MINI))
    exact = replay_run(LOGS / "runs" / MINI, RuleOptions(capsule_names="exact"))
    assert any("volunteer" in g.fields_differing for g in exact)


def test_cli_errors_without_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["conformance", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no reference run" in capsys.readouterr().err


def test_the_summary_leads_with_agreement_with_the_rules():
    from analysis.conformance.report import summary_line

    line = summary_line(1786, 0, 1786, 4)
    assert line.startswith("1,786 / 1,786 games agree with trustsim's rules, 0 with a rule or unexplained")
    assert "4 documented logging bugs" in line and "0 agree" not in line
    assert summary_line(10, 3, 8, 4).startswith("8 / 10 games agree with trustsim's rules, 2 with a rule")
    assert "logging bugs" not in summary_line(5, 5, 5, 4)  # nothing else differed
