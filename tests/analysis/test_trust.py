"""Tests of the trust analysis on small synthetic run directories and reference-format logs."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.escape_room.loader import load_trust_data
from analysis.escape_room.measures import anchor_cells, compute_cells, compute_deltas
from analysis.escape_room.pipeline import analyse
from analysis.escape_room.published import published_anchor
from analysis.escape_room.reference import import_reference_run
from analysis.escape_room.report import write_outputs
from analysis.escape_room.schedules import infer_schedule
from analysis.rundirs import DataWarning, RunDirError
from tests.analysis.synth import write_run

R = 400  # resamples in tests (fast); the CLI default is 5000


@pytest.mark.parametrize(
    ("pattern", "memoryless", "name"),
    [
        ("TTTTTTT", False, "smooth"),
        ("FTTTTTTTTTT", False, "1strike"),
        ("FFTTTTTTTTT", False, "2strike"),
        ("FFFTTTTTTTT", False, "3strike"),
        ("TTTFFTTTTTT", False, "mid2strike"),
        ("FTTTFTTTTTT", False, "recur"),
        ("TTTTTTTTTT", True, "anchor"),
        ("FFFFFFFFFF", True, "anchor_dwrong"),
        ("TFTFT", False, "custom:TFTFT"),
        ("TFTT", True, "custom:TFTT"),
    ],
)
def test_infer_schedule(pattern: str, memoryless: bool, name: str) -> None:
    assert infer_schedule([c == "T" for c in pattern], memoryless=memoryless) == name


def test_published_anchor_matches_dated_names() -> None:
    assert published_anchor("gpt-5.4-mini-2026-03-17").model == "gpt-5.4-mini"  # type: ignore[union-attr]
    assert published_anchor("gemini-3.1-pro-preview").model == "gemini-3.1-pro"  # type: ignore[union-attr]
    assert published_anchor("openai/gpt-5.1").volume == pytest.approx(2.80)  # type: ignore[union-attr]
    assert published_anchor("gpt-5") is None


def _ref_game(rounds: list[dict], outcome: str, survivors: list[str]) -> dict:
    return {"game_id": "x", "game_outcome": outcome, "survivors": survivors, "total_rounds": len(rounds),
            "rounds": rounds}  # fmt: skip


def _ref_round(
    r: int, decisions: dict, alive: list[str], deaths: dict | None = None, coins: dict | None = None
) -> dict:
    return {
        "round": r,
        "decisions": decisions,
        "alive_agents": alive,
        "death_reasons": deaths or {},
        "deaths": list((deaths or {}).keys()),
        "defaulted_to_pass": dict.fromkeys(decisions, False),
        "agent_statuses": {s: {"alive": True, "coins": c} for s, c in (coins or {}).items()},
    }


def _write_reference(folder: Path, correctness: list[bool], games: list[dict], persist: bool = True) -> Path:
    folder.mkdir(parents=True)
    mem = {"mode": "max_allowed", "reflection": "none", "persist_across_games": persist}
    settings = {
        "experiment_name": folder.name,
        "player_models": ["openai/gpt-x", "openai/gpt-x", "openai/gpt-x", "dummy"],
        "memory_config": {s: mem for s in "ABC"} | {"D": {"persist_across_games": True}},
        "dummy_config": {"D": {"correctness_list": correctness}},
    }
    (folder / "experiment_settings.json").write_text(json.dumps(settings))
    for i, g in enumerate(games):
        (folder / f"game_2026010{i}_000000.json").write_text(json.dumps(g))
    return folder


def _two_games() -> list[dict]:
    g1 = _ref_game(
        [
            _ref_round(1, {"A": "Verify: Q4", "B": "Verify: Q2", "C": "Pass", "D": "Pass"}, list("ABCD"),
                       {"C": "no_volunteer"}, {"A": 3, "B": 3, "C": 0, "D": 4}),  # B verified own puzzle (charged)
            _ref_round(2, {"A": "Volunteer: Q1-A, Q2-B, Q3-C, Q4-D+A", "B": "Verify: Q1", "D": "Pass"}, list("ABD"),
                       None, {"A": 3, "B": 2, "D": 4}),
        ],
        "SUCCESS",
        ["A", "B", "D"],
    )  # fmt: skip
    g2 = _ref_game(
        [_ref_round(1, {"A": "Volunteer: Q1-A, Q2-B, Q3-C, Q4-D", "B": "hmm", "C": "Pass", "D": "Pass"}, list("ABCD"),
                    {"A": "wrong_password"}, {"A": 0, "B": 4, "C": 4, "D": 4})],
        "ALL_DEAD",
        [],
    )  # fmt: skip
    return [g1, g2]


def test_reference_importer_conventions(tmp_path: Path) -> None:
    folder = _write_reference(tmp_path / "exp_1", [True], _two_games())
    imp = import_reference_run(folder)
    assert imp.run["model"] == "gpt-x" and imp.run["memory"] == "transcript"
    assert imp.run["schedule"] == "custom:TF"  # missing entry = D wrong
    games = pd.DataFrame(imp.games)
    g1, g2 = games.iloc[0], games.iloc[1]
    assert bool(g1["d_correct"]) and not bool(g2["d_correct"])
    # B's own-puzzle verify counts as the study counted it (charged), beside A's Q4 and B's Q1.
    assert g1["verifications"] == 3 and g1["partner_verifications"] == 1
    assert g1["protective_verifications"] == 2 and g1["escape_round"] == 2 and g1["invalid"] == 0
    assert g1["deaths_no_volunteer"] == 1 and g1["outcome"] == "escaped"
    assert g2["outcome"] == "all_dead" and g2["deaths_wrong_password"] == 1 and g2["invalid"] == 1
    ag = pd.DataFrame(imp.agent_games).set_index(["game", "seat"])
    assert ag.loc[(1, "A"), "score"] == 3 and ag.loc[(1, "C"), "score"] == 0
    assert ag.loc[(1, "C"), "rounds_alive"] == 1 and ag.loc[(1, "A"), "rounds_alive"] == 2
    assert ag.loc[(2, "A"), "death_cause"] == "wrong_password"
    dec = pd.DataFrame(imp.decisions)
    own = dec[(dec["game"] == 1) & (dec["round"] == 1) & (dec["seat"] == "B")].iloc[0]
    assert own["valid"] and own["resolved_action"] == "verify" and own["target"] == own["own_puzzle"] == 2


def test_reference_memoryless_is_anchor_and_damaged_game_stops(tmp_path: Path) -> None:
    games = _two_games()
    games[1]["game_outcome"] = "SUCCESS"
    folder = _write_reference(tmp_path / "ml", [True, True, True], [*games, games[0]], persist=False)
    (folder / "game_20260101_000000.json").write_text('{"rounds": [')  # second game damaged
    with pytest.warns(DataWarning, match="not valid JSON"):
        imp = import_reference_run(folder)
    assert imp.run["memory"] == "none" and imp.run["games"] == 1 and imp.run["schedule"] == "anchor"


def _sweep(tmp_path: Path) -> Path:
    root = tmp_path / "sweep"
    for i in range(4):
        write_run(root / f"anchor{i}", schedule="anchor", memory="none", n_games=5, seed=i, p_verify=0.6)
        write_run(root / f"smooth{i}", schedule="smooth", n_games=6, seed=10 + i, p_verify=0.2)
        write_run(root / f"strike{i}", schedule="1strike", n_games=6, seed=20 + i, p_partner=0.8)
    return root


def test_measures_match_hand_computation(tmp_path: Path) -> None:
    data = load_trust_data([_sweep(tmp_path)])
    cells = {c.keys["schedule"]: c for c in compute_cells(data, n_resamples=R)}
    g = data.games
    for schedule, cell in cells.items():
        sub = g[(g["schedule"] == schedule) & g["d_correct"]]
        assert cell.measures["volume"].estimate == pytest.approx(sub["verifications"].mean())
        share = sub["partner_verifications"].sum() / sub["verifications"].sum()
        assert cell.measures["partner_share"].estimate == pytest.approx(share)
        assert cell.measures["volume"].low <= cell.measures["volume"].estimate <= cell.measures["volume"].high
    assert cells["anchor"].cluster_unit == "game" and cells["anchor"].n_clusters == 20
    assert cells["smooth"].cluster_unit == "run" and cells["smooth"].n_clusters == 4
    ag = data.agent_games[(data.agent_games["schedule"] == "smooth") & ~data.agent_games["is_partner"]]
    assert cells["smooth"].measures["survival"].estimate == pytest.approx(ag["survived"].mean())
    assert cells["smooth"].measures["coins_per_agent_game"].estimate == pytest.approx(ag["score"].mean())
    # D-wrong secondary exists only where D was wrong
    assert cells["1strike"].measures["volume_dwrong"].n_clusters == 4
    assert math.isnan(cells["smooth"].measures["volume_dwrong"].estimate)
    assert "no games" in cells["smooth"].measures["volume_dwrong"].note


def test_deltas_and_determinism(tmp_path: Path) -> None:
    data = load_trust_data([_sweep(tmp_path)])
    cells = compute_cells(data, n_resamples=R, seed=3)
    deltas = compute_deltas(cells, anchor_cells(data, cells, n_resamples=R, seed=3))
    dt = next(d for d in deltas if d.measure == "delta_trust" and d.keys["schedule"] == "smooth")
    smooth = next(c for c in cells if c.keys["schedule"] == "smooth")
    anchor = next(c for c in cells if c.keys["schedule"] == "anchor")
    assert dt.interval.estimate == pytest.approx(
        smooth.measures["volume"].estimate - anchor.measures["volume"].estimate
    )
    assert dt.interval.significant and dt.interval.high < 0  # p_verify 0.2 vs 0.6
    again = compute_cells(data, n_resamples=R, seed=3)
    assert [c.measures["volume"] for c in again] == [c.measures["volume"] for c in cells]
    other = compute_cells(data, n_resamples=R, seed=4)
    assert [c.measures["volume"].low for c in other] != [c.measures["volume"].low for c in cells]


def test_published_anchor_used_when_data_lacks_one(tmp_path: Path) -> None:
    for i in range(3):
        write_run(tmp_path / f"s{i}", model="gpt-5.1", n_games=5, seed=i)
    data = load_trust_data([tmp_path])
    cells = compute_cells(data, n_resamples=R)
    anchors = anchor_cells(data, cells, mode="auto", n_resamples=R)
    assert anchors[("gpt-5.1", "synth", "fixed")].source.startswith("published")
    d = compute_deltas(cells, anchors)[0]
    assert d.interval.has_interval and "published" in d.interval.note
    none = compute_deltas(cells, anchor_cells(data, cells, mode="data", n_resamples=R))[0]
    assert math.isnan(none.interval.estimate) and "no anchor" in none.interval.note


def test_fewer_than_three_clusters_and_no_dcorrect(tmp_path: Path) -> None:
    write_run(tmp_path / "a", schedule="smooth", n_games=4)
    write_run(tmp_path / "b", schedule="smooth", n_games=4, seed=1)
    write_run(tmp_path / "w", schedule="anchor_dwrong", memory="none", n_games=4)
    result = analyse([tmp_path], n_resamples=R)
    smooth = next(c for c in result.cells if c.keys["schedule"] == "smooth")
    assert not smooth.measures["volume"].has_interval and "2 clusters" in smooth.measures["volume"].note
    wrong = next(c for c in result.cells if c.keys["schedule"] == "anchor_dwrong")
    assert math.isnan(wrong.measures["volume"].estimate) and wrong.measures["volume_dwrong"].has_interval
    assert any("no D-correct games" in w for w in result.warnings)
    assert any("< 3): no intervals" in w for w in result.warnings)


def test_failed_runs_excluded_unless_asked(tmp_path: Path) -> None:
    write_run(tmp_path / "ok", n_games=3)
    write_run(tmp_path / "bad", n_games=3, status="failed")
    data = load_trust_data([tmp_path])
    assert set(data.runs["run_id"]) == {"ok"}
    assert any("status 'failed' (synthetic failure)" in why for _, why in data.excluded)
    assert len(load_trust_data([tmp_path], include_incomplete=True).runs) == 2


def test_truncated_events_keep_games_before_damage(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", n_games=4)
    lines = (run / "events.jsonl").read_text().splitlines()
    # keep game 1 and 2 ends, cut inside game 3's end event
    cut = [i for i, line in enumerate(lines) if '"game_end"' in line][2]
    (run / "events.jsonl").write_text("\n".join(lines[:cut]) + "\n" + lines[cut][:15])
    with pytest.warns(DataWarning, match=rf"events.jsonl:{cut + 1}: damaged event"):
        data = load_trust_data([run])
    assert sorted(data.games["game"]) == [1, 2]
    assert set(data.decisions["game"]) == {1, 2}


def test_mixed_configurations_reported(tmp_path: Path) -> None:
    write_run(tmp_path / "a", n_games=3, config_extra={"coins": 4})
    write_run(tmp_path / "b", n_games=3, seed=5, config_extra={"coins": 4})
    write_run(tmp_path / "c", n_games=3, config_extra={"coins": 6})
    data = load_trust_data([tmp_path])
    assert len(data.problems) == 1 and "mixed configurations" in data.problems[0]
    same = load_trust_data([tmp_path / "a", tmp_path / "b"])  # seeds differ only: not mixed
    assert same.problems == []


def test_empty_and_missing_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunDirError, match="no run directories"):
        load_trust_data([tmp_path / "empty"])
    assert main(["trust", str(tmp_path / "empty"), "--out", str(tmp_path / "rep")]) == 1
    assert "no run directories" in capsys.readouterr().err
    assert main(["trust", str(tmp_path / "nope"), "--out", str(tmp_path / "rep"), "--quiet"]) == 1


def test_run_without_tables_is_excluded(tmp_path: Path) -> None:
    write_run(tmp_path / "ok", n_games=3)
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "manifest.json").write_text(json.dumps({"run_id": "bare", "status": "complete"}))
    data = load_trust_data([tmp_path])
    assert any("decisions.csv: missing" in why for _, why in data.excluded)


@pytest.mark.slow
def test_cli_writes_everything_without_nan(tmp_path: Path) -> None:
    root = _sweep(tmp_path)
    write_run(root / "two" / "x", schedule="2strike", n_games=6)  # one run: no intervals
    out = tmp_path / "report"
    rc = main(["trust", str(root), "--out", str(out), "--resamples", "300", "--quiet"])
    assert rc == 0
    for name in ("trust_formation", "culprit_targeting", "score_drivers", "score_matrix", "schedule_sweep"):
        assert (out / f"{name}.csv").exists() and (out / f"{name}.md").exists()
    for fig in (
        "fig_verification_by_round",
        "fig_per_game_bars",
        "fig_two_axis",
        "fig_recovery",
        "fig_survival",
    ):
        assert (out / f"{fig}.png").stat().st_size > 1000 and (out / f"{fig}.pdf").exists()
    for f in [*out.glob("*.csv"), *out.glob("*.md")]:
        assert "nan" not in f.read_text().lower().replace("nanosec", ""), f
    sweep = pd.read_csv(out / "schedule_sweep.csv")
    row = sweep[sweep["schedule"] == "2strike"].iloc[0]
    assert pd.isna(row["volume_low"]) and "no interval" in row["note"]
    report = (out / "report.md").read_text()
    assert "## Trust formation" in report and "fig_two_axis.png" in report


def test_write_outputs_skips_figures_with_reason(tmp_path: Path) -> None:
    for i in range(3):
        write_run(tmp_path / "in" / f"s{i}", schedule="smooth", n_games=3, seed=i)
    result = analyse([tmp_path / "in"], n_resamples=R, anchor="none")
    report = write_outputs(result, tmp_path / "out").read_text()
    assert "figure skipped: no memoryless" in report
    assert "figure skipped: no multi-failure schedule" in report


def test_reference_dir_through_cli(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for i in range(3):
        _write_reference(logs / f"exp_{i}", [True, True], _two_games()[:1] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        assert (
            main(["trust", str(logs), "--out", str(tmp_path / "rep"), "--resamples", "200", "--quiet"]) == 0
        )
    sweep = pd.read_csv(tmp_path / "rep" / "schedule_sweep.csv")
    # game 1 of _two_games: A's Q4, B's own Q2 (counted, as the study counted it) and B's Q1
    assert list(sweep["schedule"]) == ["smooth"] and sweep["volume"].iloc[0] == pytest.approx(3.0)
    assert np.isfinite(sweep["volume_low"].iloc[0])


def test_bool_columns_parse_text_and_missing() -> None:
    from analysis.escape_room.loader import _to_bool_series

    col = pd.Series(["true", "FALSE", " True ", None, "1", "0"], dtype=object)
    assert list(_to_bool_series(col)) == [True, False, True, False, True, False]


def test_reference_memory_settings_map_to_trustsim_modes() -> None:
    from analysis.escape_room.reference import _memory

    def mode(context: str, reflection: str, persist: bool = True) -> str:
        cfg = {"mode": context, "reflection": reflection, "persist_across_games": persist}
        return _memory({"memory_config": dict.fromkeys("ABC", cfg)}, "ABC")

    assert mode("max_allowed", "evolving") == "transcript_reflection"  # the study's default
    assert mode("max_allowed", "none") == "transcript"
    assert mode("current_game_only", "evolving") == "reflection"
    assert mode("current_game_only", "none", persist=False) == "none"
