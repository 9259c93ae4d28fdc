"""When Inspect stops a call (a limit, a provider error after its retries), the job stops with a failed
manifest kept in the sample, and the sample gets Inspect's own outcome: a limit, or the provider's error."""

from __future__ import annotations

import json
import math

import pytest

from tests.inspect.conftest import game_reply, inspect_service, read_log, run_files
from trustsim.llm.fake_server import FakeServer


def _eval(task: str, tmp_path, **kwargs):
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(f"trustsim/{task}", log_dir=str(tmp_path), display="none", **kwargs)
    return read_log(log.location)


def test_a_token_limit_ends_the_sample_as_a_limit(tmp_path):
    log = _eval("escape_room", tmp_path, model="mockllm/model", token_limit=1500,
                task_args={"overrides": ["game.games=2"]})  # fmt: skip
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "token"
    manifest = json.loads(run_files(sample)["manifest.json"])
    assert manifest["status"] == "failed"
    score = sample.scores["trustsim_scorer"]
    assert math.isnan(score.value) and score.reason == "trustsim_job_failed"


@pytest.mark.slow
def test_a_provider_error_fails_the_sample_with_inspects_error(tmp_path, monkeypatch):
    with FakeServer(mix={"500": 1.0}) as server:
        model = inspect_service(monkeypatch, "broken", server)
        log = _eval("trust_game", tmp_path, model=model, max_retries=1, task_args={"pairs": 1})
    (sample,) = log.samples
    assert log.status == "error" and "InternalServerError" in sample.error.message  # Inspect's own error
    manifest = json.loads(run_files(sample)["manifest.json"])
    reason = manifest["failure"]["reason"]
    assert manifest["status"] == "failed" and "InternalServerError" in reason and "500" in reason
    assert len(server.requests) >= 2  # Inspect retried (and its provider's client)
    assert manifest["llm"]["retries"] == 0  # trustsim does not retry what Inspect gave up on


def test_a_time_limit_stops_the_job_and_keeps_its_failed_run(tmp_path, monkeypatch):
    """The sample's time runs out mid-session (every answer takes 0.5 s): the job's calls are stopped, its
    failed run kept."""
    with FakeServer(delay_s=0.5, reply=game_reply) as server:
        model = inspect_service(monkeypatch, "slow", server)
        log = _eval("escape_room", tmp_path, model=model, time_limit=3)
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "time"
    manifest = json.loads(run_files(sample)["manifest.json"])
    assert manifest["status"] == "failed" and "sample stopped" in manifest["failure"]["reason"]
    assert manifest["failure"]["resume"].startswith("inspect eval-retry")
    assert manifest["counts"].get("games", 0) < 11
