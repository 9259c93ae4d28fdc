"""The yardstick on scripted runs: bayes has regret ~0 and its beliefs are the model's, the baselines do worse,
outputs are labelled and deterministic, damaged events are handled by the reader's damage rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.rundirs import DataWarning
from analysis.yardstick import LABEL, analyse
from analysis.yardstick.pipeline import analyse_paths

BASELINES = ("always_verify", "never_verify", "random", "consensus")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """mid2strike for bayes (5 sessions) and the baselines (2 sessions each), the bayes memoryless anchor."""
    from trustsim import api

    root = tmp_path_factory.mktemp("yardstick_runs")
    out = {}
    jobs = {
        "bayes": ("mid2strike", ["agent=bayes", "runs=5"]),
        **{a: ("mid2strike", [f"agent={a}", "runs=2"]) for a in BASELINES},
        "anchor": ("anchor", ["agent=bayes", "runs=2"]),
    }
    for name, (experiment, overrides) in jobs.items():
        result = api.run(experiment, [*overrides, "progress=false"], root / name)
        assert result.status == "complete", result.failure
        out[name] = result.run_dir
    return out


def _score(paths: list[Path], **options: object) -> dict[str, pd.DataFrame]:
    tables, _ = analyse_paths(paths, mc_decisions=0, n_resamples=200, **options)  # type: ignore[arg-type]
    return tables


def test_bayes_has_zero_regret_except_after_a_failed_password(runs: dict[str, Path]) -> None:
    d = _score([runs["bayes"], runs["anchor"]])["decisions"]
    assert len(d) > 300 and set(d["agent"]) == {"bayes"}
    clean = d[d["failed_passwords"] == 0]
    assert (clean["regret"] <= 1e-9).all(), clean[clean["regret"] > 1e-9]
    # after a failed password bayes may name the same, now certainly wrong, password again (its Beta update
    # spreads the failure instead of ruling the combination out): rare and the only source of regret
    assert (d["regret"] > 1e-9).mean() < 0.03
    assert d["regret"].mean() < 0.03
    assert set(d["schedule"]) == {"mid2strike", "anchor"}


def _stated(run: Path) -> dict[tuple[int, int, int, str], dict[str, float]]:
    out = {}
    for line in (run / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["type"] == "decision" and "confidence" in e:
            out[(e["session"], e["game"], e["round"], e["seat"])] = e["confidence"]
    return out


def _assert_beliefs_match(run: Path) -> int:
    d = _score([run])["decisions"]
    stated = _stated(run)
    compared = 0
    for r in d[d["failed_passwords"] == 0].itertuples():
        conf = stated[(r.session, r.game, r.round, r.seat)]
        for k in (1, 2, 3, 4):
            assert getattr(r, f"p_Q{k}") == pytest.approx(conf[str(k)], abs=1e-6), (r, k)
            compared += 1
        assert r.regret <= 1e-9, r
    return compared


def test_the_models_beliefs_are_the_bayes_agents(runs: dict[str, Path]) -> None:
    """Before any failed password the yardstick's P(best capsule right) equals bayes's stated confidence."""
    assert _assert_beliefs_match(runs["bayes"]) > 800


def test_beliefs_with_revealed_truth_and_a_random_partner_slot(tmp_path: Path) -> None:
    from trustsim import api

    overrides = ["agent=bayes", "runs=3", "game.reveal_after_game=true", "game.partner_slot=random"]
    result = api.run("recur", [*overrides, "progress=false"], tmp_path / "reveal")
    assert result.status == "complete", result.failure
    assert '"type":"reveal"' in (result.run_dir / "events.jsonl").read_text()
    assert _assert_beliefs_match(result.run_dir) > 300


def test_baselines_have_more_regret_than_bayes(runs: dict[str, Path]) -> None:
    s = _score([runs[a] for a in ("bayes", *BASELINES)])["summary"].set_index("agent")
    assert set(s.index) == {"bayes", *BASELINES}
    for agent in BASELINES:
        assert s.loc[agent, "regret_mean"] > s.loc["bayes", "regret_mean"] + 0.1, agent
    assert s.loc["bayes", "protective_share"] == pytest.approx(1.0)  # it verifies only when it pays
    assert s.loc["always_verify", "protective_share"] < 0.6  # many of its checks are ritual
    assert s.loc["never_verify", "n_verifications"] == 0


def test_cli_writes_labelled_deterministic_outputs(runs: dict[str, Path], tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        code = main(["yardstick", str(runs["bayes"]), str(runs["never_verify"]), "--out", str(out),
                     "--mc-decisions", "20", "--mc-sims", "2000", "--resamples", "200", "--quiet"])  # fmt: skip
        assert code == 0
        outs.append(out)
    for name in ("decisions.csv", "summary.csv", "validation.csv", "report.md"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    for name in ("decisions.csv", "summary.csv", "validation.csv"):
        df = pd.read_csv(outs[0] / name)
        assert len(df) and (df["yardstick"] == LABEL).all(), name
    assert LABEL in (outs[0] / "report.md").read_text()
    v = pd.read_csv(outs[0] / "validation.csv")
    assert (v["z"].abs() < 5).all()


def test_python_api_tables(runs: dict[str, Path]) -> None:
    result = analyse([str(runs["bayes"])], mc_decisions=0, resamples=200)
    assert {"decisions", "summary", "validation"} <= set(result.tables)
    columns = set(result.tables["summary"].columns)
    assert {"model", "schedule", "memory", "n_decisions", "regret_mean", "regret_low", "regret_high",
            "protective_share", "protective_low", "protective_high"} <= columns  # fmt: skip


def test_no_input_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["yardstick", "--out", str(tmp_path / "o")]) == 2
    assert main(["yardstick", str(tmp_path), "--out", str(tmp_path / "o2")]) == 2
    assert "no escape-room run" in capsys.readouterr().err


def test_damaged_events_leave_out_that_game(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "damaged"
    shutil.copytree(runs["never_verify"], run)
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    # garble the first decision of session 0, game 2
    i = next(
        i for i, line in enumerate(lines) if '"type":"decision"' in line and '"session":0,"game":2,' in line
    )
    lines[i] = "{not json\n"
    (run / "events.jsonl").write_text("".join(lines))
    with pytest.warns(DataWarning, match="whose events are intact"):
        d = _score([run])["decisions"]
    games = set(zip(d["session"], d["game"], strict=True))
    assert (0, 2) not in games and (0, 1) in games and (0, 3) in games


def test_mixed_team_seats_are_scored_under_their_own_agent(tmp_path: Path) -> None:
    from trustsim import api

    result = api.run(
        "mid2strike", ["agent=bayes", "game.seats.A.agent=never_verify", "progress=false"], tmp_path / "mixed"
    )
    assert result.status == "complete", result.failure
    tables = _score([result.run_dir])
    d, s = tables["decisions"], tables["summary"]
    assert set(d[d["seat"] == "A"]["agent"]) == {"never_verify"}
    assert set(d[d["seat"] != "A"]["agent"]) == {"bayes"}
    assert set(s["agent"]) == {"bayes", "never_verify"}
    assert set(s["team"]) == {"A=never_verify;B=bayes;C=bayes"}
    assert (d[d["seat"] == "A"]["action"] == "volunteer").all()
