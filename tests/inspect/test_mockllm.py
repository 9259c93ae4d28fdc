"""An escape-room task through Inspect's ``mockllm/model``: every model call and every game event in the
sample's transcript, in the job's order; scores; the run directory written back out by from-inspect."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys

import pandas as pd
import pytest

from analysis.inspect_logs import EVENT_SOURCE
from tests.conftest import REPO
from tests.inspect.conftest import run_files


def _events(sample):
    return [
        e for e in sample.events if e.event == "model" or (e.event == "info" and e.source == EVENT_SOURCE)
    ]


def test_every_call_and_event_in_the_transcript_in_order(mockllm_log):
    (sample,) = mockllm_log.samples
    files = run_files(sample)
    manifest = json.loads(files["manifest.json"])
    decisions = pd.read_csv(io.StringIO(files["decisions.csv"]))
    llm = decisions[~decisions["is_partner"]]
    assert manifest["status"] == "complete" and manifest["counts"]["games"] == 2
    assert manifest["config"]["model"]["name"] == "mockllm/model"
    assert set(llm["model"]) == {"mockllm/model"} and set(llm["invalid_reason"]) == {"unparseable"}
    transcript = _events(sample)
    calls = [e for e in transcript if e.event == "model"]
    assert len(calls) == manifest["llm"]["calls_sent"] == len(llm) > 0  # one call per decision
    # the job's events, every one, in order, as events.jsonl holds them
    events = [json.loads(line) for line in files["events.jsonl"].splitlines()]
    assert [e.data for e in transcript if e.event == "info"] == events
    # each round's calls come after its round_start and before its decisions
    position = {}
    for i, e in enumerate(transcript):
        if e.event == "info" and e.data["type"] == "round_start":
            position[(e.data["game"], e.data["round"])] = i
    starts = sorted(position.items(), key=lambda kv: kv[1])
    for k, ((game, rnd), at) in enumerate(starts):
        end = starts[k + 1][1] if k + 1 < len(starts) else len(transcript)
        between = transcript[at:end]
        first_decision = next(
            j for j, e in enumerate(between) if e.event == "info" and e.data["type"] == "decision"
        )
        made = int(((llm["game"] == game) & (llm["round"] == rnd)).sum())
        assert sum(e.event == "model" for e in between[:first_decision]) == made, (game, rnd)


def test_scores_metrics_and_cell(mockllm_log):
    (sample,) = mockllm_log.samples
    score = sample.scores["trustsim_scorer"]
    assert set(score.value) == {"volume", "partner_share", "escape_rate", "survival", "regret", "brier"}
    assert score.value["volume"] == 0.0  # unparseable answers pass
    assert math.isnan(score.value["partner_share"])  # no verification: no share (as the analysis says)
    assert "events.jsonl" not in score.metadata["trustsim_run"]  # the metrics read the manifest and tables
    assert sample.metadata["schedule"] == "mid2strike" and sample.metadata["seed"] == 0
    metrics = mockllm_log.results.scores[0].metrics
    assert metrics["volume"].value == 0.0


@pytest.mark.slow
def test_from_inspect_writes_the_run_directory_that_analyses_and_the_viewer_read(mockllm_log, tmp_path):
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", "from-inspect", mockllm_log.location, "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = [p.parent for p in out.rglob("manifest.json")]
    files = run_files(mockllm_log.samples[0])
    for name in ("events.jsonl", "games.csv", "decisions.csv", "agent_games.csv", "predictions.csv"):
        assert (run / name).read_text(encoding="utf-8") == files[name], name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["run_dir"] == str(run)
    assert manifest["inspect"]["sample"] == "mid2strike-session-seed0" and manifest["inspect"][
        "task"
    ].endswith("escape_room")
    trust = subprocess.run(
        [sys.executable, "-m", "analysis", "trust", str(out), "--out", str(tmp_path / "report"), "--no-figures"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert trust.returncode == 0, trust.stderr[-2000:]
    assert (tmp_path / "report" / "report.md").is_file()
    site = tmp_path / "site"
    view = subprocess.run([sys.executable, "-m", "analysis", "view", str(out), "--out", str(site)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert view.returncode == 0, view.stderr[-2000:]
    assert "mid2strike-session-seed0" in (site / "data" / "index.js").read_text(encoding="utf-8")
