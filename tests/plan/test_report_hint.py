"""The first report on a small run says how many sessions give an interval and how to plan for a width."""

from __future__ import annotations

from analysis.__main__ import main
from trustsim import api


def test_a_one_session_report_says_how_many_sessions_and_the_plan_command(tmp_path):
    run = api.run("smooth", ["agent=bayes"], run_dir=tmp_path / "run")  # like the default run: 1 session
    assert (
        main(["trust", str(run.run_dir), "--out", str(tmp_path / "report"), "--no-figures", "--quiet"]) == 0
    )
    text = (tmp_path / "report" / "report.md").read_text()
    assert "(no interval: 1 cluster (< 3)" in text
    hint = text[text.index("## How many sessions") :]
    assert (
        "scripted / smooth / transcript: 1 session, 1 run cluster(s); an interval needs 3: run it with `runs=3`"
        in hint
    )
    assert f"`python -m analysis plan {run.run_dir} --measure volume --width 0.25`" in hint
    assert "python -m analysis plan --reference" in hint


def test_a_report_with_intervals_has_no_hint(tmp_path):
    run = api.run("smooth", ["agent=bayes", "runs=3"], run_dir=tmp_path / "run")
    assert (
        main(["trust", str(run.run_dir), "--out", str(tmp_path / "report"), "--no-figures", "--quiet"]) == 0
    )
    assert "## How many sessions" not in (tmp_path / "report" / "report.md").read_text()


def test_the_hint_beside_the_reference_logs_names_only_the_users_runs(tmp_path, monkeypatch):
    """A relative run directory analysed with --reference (absolute extracted logs): the pilot command names
    the user's run, not the reference folders (their paths once made the report fail)."""
    monkeypatch.chdir(tmp_path)
    api.run("smooth", ["agent=bayes"], run_dir="runs/one")
    assert main(["trust", "runs", "--reference", "--out", "report", "--no-figures", "--quiet"]) == 0
    hint = (tmp_path / "report" / "report.md").read_text().split("## How many sessions", 1)[1]
    assert "`python -m analysis plan runs/one --measure volume --width 0.25`" in hint
