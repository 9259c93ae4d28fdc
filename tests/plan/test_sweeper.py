"""The plan file drives a multirun: ``python -m trustsim -m +plan=plan.csv`` (hydra_plugins/trustsim_sweeper)."""

from __future__ import annotations

import csv
import shlex
import subprocess
from pathlib import Path

import pytest
from hydra.errors import HydraException

from hydra_plugins.trustsim_sweeper import plan_file, sweeper
from tests.conftest import cli

# Hydra's plugin scan re-executes plugin modules (loader.load_module): names are looked up at call time.

REPO = Path(__file__).resolve().parents[2]


def write_plan(path: Path, rows: list[dict[str, str]]) -> Path:
    columns = sorted({k for r in rows for k in r})
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_read_plan_merges_jobs_skips_rows_without_a_number_and_keeps_quoted_overrides(tmp_path):
    quoted = shlex.join(["+experiment=1strike", "model.params={reasoning_effort: none}"])
    plan = plan_file.read_plan(
        write_plan(
            tmp_path / "plan.csv",
            [
                {"label": "a", "overrides": quoted, "runs": "12"},
                {"label": "b", "overrides": quoted, "runs": "30"},
                {
                    "label": "c",
                    "overrides": "+experiment=smooth",
                    "runs": "",
                    "plan_note": "1 session: needs >= 2",
                },
                {"label": "d", "overrides": "+experiment=anchor", "runs": "4.0"},
            ],
        )
    )
    assert [(j.overrides, j.runs, j.labels) for j in plan.jobs] == [
        (("+experiment=1strike", "model.params={reasoning_effort: none}"), 30, ("a", "b")),
        (("+experiment=anchor",), 4, ("d",)),
    ]
    assert plan.skipped == (("c", "1 session: needs >= 2"),) and plan.merged == 1


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"overrides": "+experiment=smooth"}], "column(s) runs missing"),
        ([{"overrides": "+experiment=smooth", "runs": "0"}], "line 2, column runs: '0'"),
        ([{"overrides": "+experiment=smooth", "runs": "many"}], "'many' is not a positive integer"),
        ([{"overrides": "'unclosed", "runs": "3"}], "column overrides"),
    ],
)
def test_read_plan_names_the_bad_value(tmp_path, rows, message):
    with pytest.raises(plan_file.PlanFileError, match=r"plan\.csv") as err:
        plan_file.read_plan(write_plan(tmp_path / "plan.csv", rows))
    assert message in str(err.value)
    with pytest.raises(plan_file.PlanFileError, match="cannot read"):
        plan_file.read_plan(tmp_path / "missing.csv")


def test_plan_jobs_cross_the_command_line_and_refuse_a_key_set_twice(tmp_path):
    plan = plan_file.read_plan(
        write_plan(tmp_path / "p.csv", [{"overrides": "+experiment=1strike agent=bayes", "runs": "3"}])
    )
    jobs = sweeper.plan_jobs(plan, [["seed=0"], ["seed=1"]], "p.csv")
    assert jobs == [
        ["+experiment=1strike", "agent=bayes", "runs=3", "seed=0"],
        ["+experiment=1strike", "agent=bayes", "runs=3", "seed=1"],
    ]
    with pytest.raises(HydraException, match="agent is set by the plan"):
        sweeper.plan_jobs(plan, [["agent=random"]], "p.csv")
    with pytest.raises(HydraException, match="runs is set by the plan"):
        sweeper.plan_jobs(plan, [["runs=9"]], "p.csv")


def _trustsim(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("trustsim", *args, cwd=cwd, env={"CI": "true"}, timeout=300)


@pytest.mark.slow
def test_a_plan_made_by_analysis_plan_drives_a_multirun(tmp_path):
    pilot = _trustsim(
        tmp_path, "-m", "+experiment=smooth,1strike", "agent=bayes", "runs=3", "hydra.sweep.dir=pilot"
    )
    assert pilot.returncode == 0, pilot.stderr[-2000:]
    from analysis.__main__ import main

    assert main(["plan", str(tmp_path / "pilot"), "--measure", "volume", "--width", "0.05", "--out",
                 str(tmp_path / "plan"), "--resamples", "200"]) == 0  # fmt: skip
    rows = list(csv.DictReader((tmp_path / "plan" / "plan.csv").open()))
    runs = {r["schedule"]: int(r["runs"]) for r in rows}
    study = _trustsim(tmp_path, "-m", "+plan=plan/plan.csv", "seed=5", "hydra.sweep.dir=study")
    assert study.returncode == 0, study.stderr[-2000:]
    assert "trustsim: plan plan/plan.csv: 2 job(s)" in study.stderr
    assert (
        "in one process (hydra/launcher=trustsim)" in study.stdout
    )  # the plan's jobs run through trustsim's launcher
    jobs = list(csv.DictReader((tmp_path / "study" / "jobs.csv").open()))
    assert len(jobs) == 2 and all(j["status"] == "complete" for j in jobs)
    for job in jobs:
        schedule = "smooth" if "+experiment=smooth" in job["overrides"] else "1strike"
        assert f"runs={runs[schedule]}" in job["overrides"] and "seed=5" in job["overrides"]
    plain = _trustsim(tmp_path, "-m", "+experiment=smooth", "agent=bayes,random", "hydra.sweep.dir=plain")
    assert plain.returncode == 0 and len(list(csv.DictReader((tmp_path / "plain" / "jobs.csv").open()))) == 2
