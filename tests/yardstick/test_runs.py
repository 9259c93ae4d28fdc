"""The yardstick on scripted runs: the exact posterior equals the bayes agent's beliefs before any failed
password, the team variant's teammates play as bayes teammates did, outputs labelled
with the model version and deterministic, damaged events handled by the reader's damage rule."""

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


def _before_any_failure_mask(run: Path, keys: list[tuple[int, int, int]]) -> list[bool]:
    """For (session, game, round) keys: whether no password had failed before, in the session (memory) or in
    the game (memoryless runs reset beliefs every game). There the exact posterior and the bayes agent's Beta
    counts agree (a failed password is where they part)."""
    memoryless = json.loads((run / "manifest.json").read_text())["cell"]["memory"] == "none"
    failures = []
    for line in (run / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["type"] == "volunteer" and not e["correct"]:
            failures.append((e["session"], e["game"], e["round"]))
    out = []
    for session, game, rnd in keys:
        out.append(
            not any(
                s == session and (g == game if memoryless else g <= game) and (g, r) < (game, rnd)
                for s, g, r in failures
            )
        )
    return out


def _before_any_failure(d: pd.DataFrame, run: Path) -> pd.DataFrame:
    keys = list(zip(d["session"], d["game"], d["round"], strict=True))
    return d[_before_any_failure_mask(run, keys)]


def _stated(run: Path) -> dict[tuple[int, int, int, str], dict[str, float]]:
    out = {}
    for line in (run / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["type"] == "decision" and "confidence" in e:
            out[(e["session"], e["game"], e["round"], e["seat"])] = e["confidence"]
    return out


def _assert_beliefs_match(run: Path) -> int:
    d = _before_any_failure(_score([run])["decisions"], run)
    stated = _stated(run)
    compared = 0
    for r in d.itertuples():
        conf = stated[(r.session, r.game, r.round, r.seat)]
        for k in (1, 2, 3, 4):
            assert getattr(r, f"p_Q{k}") == pytest.approx(conf[str(k)], abs=1e-6), (r, k)
            compared += 1
    return compared


def test_the_models_beliefs_are_the_bayes_agents(runs: dict[str, Path]) -> None:
    """Before any failed password of the session the yardstick's P(best capsule right) equals bayes's stated
    confidence (conjugate evidence only: the exact posterior is the agent's Beta counts)."""
    assert _assert_beliefs_match(runs["bayes"]) > 200
    assert _assert_beliefs_match(runs["anchor"]) > 200


def test_beliefs_with_revealed_truth_and_a_random_partner_slot(tmp_path: Path) -> None:
    from trustsim import api

    overrides = ["agent=bayes", "runs=3", "game.reveal_after_game=true", "game.partner_slot=random"]
    result = api.run("recur", [*overrides, "progress=false"], tmp_path / "reveal")
    assert result.status == "complete", result.failure
    assert '"type":"reveal"' in (result.run_dir / "events.jsonl").read_text()
    assert _assert_beliefs_match(result.run_dir) > 40


def test_the_team_variants_teammates_play_as_the_bayes_agents_did(runs: dict[str, Path]) -> None:
    """In a team of bayes agents the ``team`` variant's teammate model is right: before any failed password of
    the session (beliefs equal), each seat's actual move is one the reference rule gives it (a tie: one of the
    tied targets)."""
    from analysis.yardstick.beliefs import Posterior
    from analysis.yardstick.evidence import heard
    from analysis.yardstick.model import VOLUNTEER, GameTable
    from analysis.yardstick.pipeline import load
    from analysis.yardstick.score import round_state

    compared = 0
    for run_dir in (runs["bayes"], runs["anchor"]):
        (run,) = load([run_dir]).runs
        posteriors: dict[int, dict[str, Posterior]] = {}
        for game in sorted(run.games, key=lambda g: (g.session, g.game)):
            seats = posteriors.setdefault(game.session, {s: Posterior(s) for s in "ABC"})
            if run.memory == "none":
                for p in seats.values():
                    p.forget()
            table = GameTable(game.owners, {s: p.view(game.owners) for s, p in seats.items()}, "team")
            agree = _before_any_failure_mask(
                run_dir, [(game.session, game.game, r.number) for r in game.rounds]
            )
            for rnd, ok in zip(game.rounds, agree, strict=True):
                if not ok:
                    break
                state = round_state(game, rnd)
                for c in rnd.choices:
                    if c.seat != "D":
                        support = {m for m, p in table.teammate_moves(state, c.seat) if p > 0}
                        assert (c.target if c.action == "verify" else VOLUNTEER) in support, (
                            game.game,
                            rnd,
                            c,
                        )
                        compared += 1
            for s, p in seats.items():
                p.add_game(game.owners, heard(game, s).facts())
    assert compared > 150


@pytest.mark.slow
def test_passing_is_a_best_action_only_with_teammates(runs: dict[str, Path]) -> None:
    """Under ``team`` a pass is a best action in many states of these runs; under ``self_reliant`` only where
    nothing can be won."""
    paths = [runs[a] for a in ("bayes", *BASELINES)]
    team = _score(paths)["decisions"]
    alone = _score(paths, variant="self_reliant")["decisions"]
    assert (team["best_action"] == "pass").mean() > 0.2
    assert ((alone["best_action"] == "pass") <= (alone["ev_best"] <= 1e-9)).all()
    assert set(team["model_version"]) == {"v2"} and set(alone["variant"]) == {"self_reliant"}


@pytest.mark.slow
def test_cli_writes_labelled_deterministic_outputs(runs: dict[str, Path], tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        code = main(["yardstick", str(runs["bayes"]), str(runs["never_verify"]), "--out", str(out),
                     "--mc-decisions", "8", "--mc-sims", "1000", "--resamples", "200", "--quiet"])  # fmt: skip
        assert code == 0
        outs.append(out)
    for name in ("decisions.csv", "summary.csv", "validation.csv", "report.md"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    for name in ("decisions.csv", "summary.csv", "validation.csv"):
        df = pd.read_csv(outs[0] / name)
        assert len(df) and (df["yardstick"] == LABEL).all() and (df["model_version"] == "v2").all(), name
    assert LABEL in (outs[0] / "report.md").read_text() and "model v2" in (outs[0] / "report.md").read_text()
    v = pd.read_csv(outs[0] / "validation.csv")
    assert (v["z"].abs() < 5).all()


def test_symmetric_variant_values_decisions_only_at_a_fixed_point(runs: dict[str, Path]) -> None:
    """Late decisions reach a fixed point and are valued (the same columns as the other variants); others
    are left without a value, with the reason (a cycle; more than 3 rounds left: not computed), and counted
    in the summary's note."""
    tables = _score([runs["anchor"]], variant="symmetric")
    d, summary = tables["decisions"], tables["summary"]
    valued = d["regret"].notna()
    assert valued.any() and not valued.all() and (d["variant"] == "symmetric").all()
    assert (d.loc[d["rounds_left"] <= 2, "regret"].notna()).all()
    reasons = d.loc[~valued, "best_action"]
    assert reasons.str.match(
        r"no fixed point \(cycle of period \d+\)|not computed \(more than 3 rounds left\)"
    ).all()
    assert (reasons.str.startswith("not computed") == (d.loc[~valued, "rounds_left"] > 3)).all()
    assert d.loc[~valued, ["ev_pass", "ev_volunteer", "p_teammate_volunteers"]].isna().all().all()
    assert (d.loc[valued, "regret"] >= 0).all() and d.loc[valued, "ev_pass"].notna().all()
    assert f"{int((~valued).sum())} decisions without a value" in summary["note"].iloc[0]
    assert summary["n_decisions"].iloc[0] == len(d)


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
