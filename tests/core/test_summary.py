"""The end-of-run summary (trustsim/summary.py): every game family, the weak-model label, the CLI hook."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim import api
from trustsim.interpreter import python_command
from trustsim.summary import SPARK, sparkline, summarize, summary_line, sweep_next_lines, weak_reason

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small scripted run per game family."""
    base = tmp_path_factory.mktemp("summary")
    jobs = {
        "escape_room": ("mid2strike", ["agent=bayes", "progress=false"]),
        "reliance": ("reliance", ["progress=false"]),
        "arena": ("ipd", ["progress=false"]),
        "trust_game": ("trust_game_repeated", ["progress=false"]),
    }
    out = {}
    for family, (experiment, overrides) in jobs.items():
        result = api.run(experiment, overrides, run_dir=base / family)
        assert result.status == "complete", result.failure
        out[family] = base / family
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_sparkline_scales_from_zero_to_the_maximum() -> None:
    assert sparkline([0, 4, 8]) == SPARK[0] + SPARK[4] + SPARK[7]
    assert sparkline([3, 3]) == SPARK[7] * 2  # scaled from 0
    assert sparkline([]) == "" and sparkline([0, 0]) == SPARK[0] * 2


def test_escape_room_summary_counts_match_the_tables(runs: dict[str, Path]) -> None:
    run = runs["escape_room"]
    games = _rows(run / "games.csv")
    text = summarize(run)
    escaped = sum(g["escaped"] == "true" for g in games)
    assert f"escape room, {len(games)} games" in text
    lost = sum(g["outcome"] == "all_dead" for g in games)
    assert f"games: {escaped} escaped, {lost} lost with every seat dead" in text
    # individual deaths are counted apart from games lost, so the two never read as a contradiction
    died = (
        sum(int(g["deaths_no_volunteer"]) for g in games),
        sum(int(g["deaths_wrong_password"]) for g in games),
    )
    assert (
        f"seats eliminated, escaped games included: {died[0]} drawn when nobody volunteered, {died[1]} "
        in text
    )
    verif = [int(g["verifications"]) for g in games]
    assert f"verifications per game: {sparkline(verif)}" in text
    table = next(line for line in text.splitlines() if line.startswith("  verifications "))
    assert [int(x) for x in table.split()[1:]] == verif
    assert "partner" in text and "wrong" in text  # mid2strike: D is wrong in games 4-5
    assert f"run directory: {run}" in text
    assert f"next: {python_command()} -m analysis trust {run} --out report/" in text
    assert "WEAK" not in text and len(text.splitlines()) <= 24  # one screen
    assert summary_line(run).startswith(f"{json.loads((run / 'manifest.json').read_text())['run_id']}: ")


def test_other_families_have_their_own_lines(runs: dict[str, Path]) -> None:
    rel = summarize(runs["reliance"])
    stages = _rows(runs["reliance"] / "stages.csv")
    optimal = sum(r["optimal"] == "true" for r in stages)
    assert f"optimal decisions {optimal} of {len(stages)}" in rel and "share optimal per stage" in rel
    assert "python -m analysis reliance" in rel

    arena = summarize(runs["arena"])
    moves = _rows(runs["arena"] / "moves.csv")
    assert "cooperation: A" in arena and "share cooperating per round" in arena
    assert f"{len({m['round'] for m in moves})} rounds" in arena and "python -m analysis arena" in arena

    tg = summarize(runs["trust_game"])
    ex = _rows(runs["trust_game"] / "exchanges.csv")
    mean_sent = sum(float(r["sent"]) for r in ex) / len(ex)
    assert f"sent {mean_sent:.2f} of 10" in tg and "mean sent per round" in tg
    assert "python -m analysis trust_game" in tg
    assert "round robin" not in arena  # one match: the agent, with its pairing below
    # each family's next: line names a folder of its own, so two reports never share one
    folders = [summarize(run).splitlines()[-1].rsplit("--out ", 1)[1] for run in runs.values()]
    assert len(set(folders)) == len(folders) == 4
    for run in runs.values():
        assert "\n" not in summary_line(run) and str(run) in summary_line(run)


def test_a_tournament_names_its_players(tmp_path: Path) -> None:
    result = api.run("ipd_tournament", ["progress=false", "game.rounds=5"], run_dir=tmp_path / "t")
    assert result.status == "complete", result.failure
    matches = _rows(tmp_path / "t" / "matches.csv")
    players = sorted({m["player_a"] for m in matches} | {m["player_b"] for m in matches})
    text = summarize(tmp_path / "t")
    assert f"round robin of {len(players)} players" in text.splitlines()[1] and "agent " not in text
    assert f"players: {', '.join(players)}" in text


def test_weak_model_is_labelled(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "weak"
    shutil.copytree(runs["escape_room"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["model"] = {"name": "smollm2", "litellm_model": "trustsim/smollm2", "weak": True}
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert "WEAK MODEL: smollm2 is flagged weak" in summarize(run)
    assert "[WEAK MODEL]" in summary_line(run)


def test_many_invalid_answers_label_a_result_weak(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "invalid"
    shutil.copytree(runs["escape_room"], run)
    rows = _rows(run / "decisions.csv")
    for i, r in enumerate(rows):
        if r["is_partner"] != "true":
            r["model"] = "some-llm"  # scripted agents' rows are not answers
            r["valid"] = "false" if i % 2 == 0 else "true"
    with (run / "decisions.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = summarize(run)
    assert "WEAK MODEL" in text and "answers" in text and "were invalid" in text
    manifest = json.loads((run / "manifest.json").read_text())
    assert weak_reason(manifest, 10, 2) is None and weak_reason(manifest, 10, 3) is not None


@pytest.mark.slow
def test_cli_prints_the_summary_and_one_line_per_multirun_job(tmp_path: Path) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    # the jobs run outside the checkout, so the printed command is run as printed in that same folder
    run = tmp_path / "one"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustsim",
            "+experiment=mid2strike",
            "agent=bayes",
            "game.games=3",
            "progress=false",
            f"hydra.run.dir={run}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    nxt = f"next: {python_command(tmp_path)} -m analysis trust one --out report/"
    assert "verifications per game:" in out and nxt in out
    report = subprocess.run(  # the printed command runs as printed, where the job ran
        nxt.removeprefix("next: "), shell=True, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "report.md").is_file()
    sweep = tmp_path / "sweep"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "trustsim",
            "-m",
            "+experiment=mid2strike",
            "agent=bayes",
            "game.games=2",
            "seed=1,2",
            "progress=false",
            f"hydra.sweep.dir={sweep}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line for line in out.splitlines() if line.startswith("summary: ")]
    assert len(lines) == 2 and all("2 games" in line for line in lines)
    assert out.splitlines()[-1] == f"next: {python_command(tmp_path)} -m analysis trust sweep --out report/"


def test_a_sweep_names_the_analysis_of_each_game_it_played(runs: dict[str, Path], tmp_path: Path) -> None:
    py = python_command()
    one = sweep_next_lines(tmp_path, [runs["escape_room"], runs["escape_room"]])
    assert one == [f"next: {py} -m analysis trust {tmp_path} --out report/"]
    mixed = sweep_next_lines(tmp_path, [runs["escape_room"], tmp_path / "no-manifest", runs["arena"]])
    assert mixed == [  # never two families in one folder
        f"next: {py} -m analysis trust {tmp_path} --out report/",
        f"next: {py} -m analysis arena {tmp_path} --out report/arena/",
    ]
    assert sweep_next_lines(tmp_path, [runs["arena"]]) == [
        f"next: {py} -m analysis arena {tmp_path} --out report/arena/"
    ]
    card = sweep_next_lines(tmp_path, [runs["arena"]], battery=True)
    assert card == [f"next: {py} -m analysis card {tmp_path} --out card/"]


def test_a_folder_of_runs_points_to_the_status_command(runs: dict[str, Path], capsys) -> None:
    from trustsim.summary import main

    folder = runs["arena"].parent
    assert main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"it holds {len(runs)} run directories" in err
    assert f"Pass one run directory; for many, use python -m trustsim.status {folder}" in err
    assert main([str(runs["arena"]), "--line"]) == 0
