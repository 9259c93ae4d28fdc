"""``python -m analysis plan``: the table, the files, the pricing, the comparisons and bad input."""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from trustsim import api


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bayes pilots of 5 sessions: smooth and 1strike (memory), and the memoryless anchor."""
    root = tmp_path_factory.mktemp("pilot")
    for experiment in ("smooth", "1strike", "anchor"):
        assert api.run(experiment, ["agent=bayes", "runs=5"], run_dir=root / experiment).status == "complete"
    return root


def plan(tmp_path: Path, *args: str) -> tuple[int, pd.DataFrame | None]:
    out = tmp_path / "plan"
    code = main(["plan", *args, "--out", str(out), "--resamples", "200"])
    return code, (pd.read_csv(out / "plan.csv") if code == 0 else None)


def test_plan_prints_and_writes_a_plan_per_cell(pilot, tmp_path, capsys):
    code, frame = plan(tmp_path, str(pilot), "--measure", "volume", "--width", "0.05")
    assert code == 0 and frame is not None
    assert sorted(frame["schedule"]) == ["1strike", "anchor", "smooth"]
    memory = frame[frame["memory"] == "transcript"].set_index("schedule")
    assert (memory["design"] == "session").all() and (memory["sessions_now"] == 5).all()
    assert (memory["units_per_session"] > 0).all() and (memory["df"] == 4).all()
    assert (memory["sessions"] >= memory["sessions_expected"]).all()
    anchor = frame[frame["schedule"] == "anchor"].iloc[0]
    assert (
        anchor["design"] == "unit"
        and anchor["df"] == anchor["sessions_now"] * anchor["units_per_session"] - 1
    )
    assert (frame["runs"] == frame["sessions"]).all()
    assert (
        frame["overrides"]
        .map(shlex.split)
        .map(lambda o: "agent=bayes" in o and not any(x.startswith("runs=") for x in o))
        .all()
    )
    printed = capsys.readouterr().out
    assert (
        "| bayes / smooth / transcript |" in printed
        and f"run it: python -m trustsim -m +plan={tmp_path / 'plan' / 'plan.csv'}" in printed
    )
    text = (tmp_path / "plan" / "plan.md").read_text()
    assert "Method:" in text and "Assumptions:" in text and "+plan=" in text


def test_delta_plans_the_cell_and_its_anchor(pilot, tmp_path):
    code, frame = plan(tmp_path, str(pilot), "--measure", "delta_trust", "--width", "0.1")
    assert code == 0 and frame is not None
    anchor = frame[frame["role"] == "anchor"]
    cells = frame[frame["role"] == "cell"]
    assert len(anchor) == 1 and set(cells["schedule"]) == {"smooth", "1strike"}
    assert anchor["runs"].iloc[0] == cells["runs"].max()  # the anchor runs as much as its most demanding cell
    # the delta's variance adds the anchor's: more sessions than the cell alone
    _, alone = plan(tmp_path, str(pilot), "--measure", "volume", "--width", "0.1")
    assert alone is not None
    for schedule in ("smooth", "1strike"):
        delta = cells[cells["schedule"] == schedule]["per_session_var"].iloc[0]
        own = alone[alone["schedule"] == schedule]["per_session_var"].iloc[0]
        assert delta > own


def test_compare_plans_the_difference_between_two_reference_models(reference_dir, tmp_path, capsys):
    code, frame = plan(tmp_path, str(reference_dir), "--measure", "volume", "--width", "0.5",
                       "--where", "schedule=1strike", "--where", "model=gpt-5.1,gemini-2.5-flash",
                       "--compare", "model", "--effect", "1.0")  # fmt: skip
    assert code == 0 and frame is not None
    pairs = pd.read_csv(tmp_path / "plan" / "comparisons.csv")
    assert len(pairs) == 1 and {pairs["a"][0], pairs["b"][0]} == {"gpt-5.1", "gemini-2.5-flash"}
    assert pairs["per_session_var"][0] == pytest.approx(frame["per_session_var"].sum())
    assert (frame["runs"] == max(pairs["sessions"][0], pairs["sessions_power"][0])).all()
    assert f"| {pairs['a'][0]} − {pairs['b'][0]} |" in capsys.readouterr().out


def test_model_prices_each_job_through_the_preview(reference_dir, tmp_path, capsys):
    code, frame = plan(tmp_path, str(reference_dir), "--measure", "volume", "--width", "0.25",
                       "--where", "schedule=1strike", "--where", "model=gpt-5.1", "--model", "gpt-5.1")  # fmt: skip
    assert code == 0 and frame is not None
    row = frame.iloc[0]
    assert (
        row["priced_model"] == "gpt-5.1" and 0 < row["cost_low"] <= row["cost_estimate"] <= row["cost_high"]
    )
    # per-session figures scale: the data's 10 sessions and the plan's runs
    assert row["cost_now_high"] / row["cost_high"] == pytest.approx(10 / row["runs"])
    assert row["overrides"] == "+experiment=1strike memory=transcript agent=llm model=gpt-5.1"
    out = capsys.readouterr().out
    assert "cost with gpt-5.1" in out and "$" in out


def test_own_model_of_a_scripted_agent_costs_nothing(pilot, tmp_path):
    code, frame = plan(
        tmp_path, str(pilot / "smooth"), "--measure", "volume", "--width", "0.1", "--model", "own"
    )
    assert code == 0 and frame is not None
    assert frame["cost_note"].iloc[0] == "scripted agent: no LLM calls"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--where", "colour=red"], "--where colour=...: no such cell key"),
        (["--where", "schedule=recur"], "no cell matches --where schedule=recur"),
        (["--compare", "memory"], "--compare memory: no two cells differ only in 'memory'"),
        (["--model", "no-such-model"], "cannot price the job"),
    ],
)
def test_bad_requests_say_why(pilot, tmp_path, capsys, args, message):
    code, _ = plan(tmp_path, str(pilot / "smooth"), "--measure", "volume", "--width", "0.1", *args)
    assert code == 2
    assert message in capsys.readouterr().err


def test_no_input_and_a_single_session_cell(tmp_path, capsys):
    assert main(["plan", "--measure", "volume", "--width", "0.1", "--out", str(tmp_path / "p")]) == 2
    assert "give pilot run or sweep directories" in capsys.readouterr().err
    api.run("smooth", ["agent=bayes"], run_dir=tmp_path / "one")
    code, frame = plan(tmp_path, str(tmp_path / "one"), "--measure", "volume", "--width", "0.1")
    assert code == 0 and frame is not None
    assert pd.isna(frame["runs"].iloc[0]) and "needs >= 2" in frame["cell_note"].iloc[0]
