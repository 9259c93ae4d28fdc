"""The yardstick on the shipped reference logs (escape-room-v2): every game read, counts agree with the trust
importer, every announcement parsed, a summary row per model x schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.escape_room.reference import import_reference_run
from analysis.reference_data import reference_dir
from analysis.yardstick.pipeline import decisions_table, load
from analysis.yardstick.summary import summarise, validate
from analysis.yardstick.traces import iter_reference_traces

MODELS = {
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "gemini-2.5-flash",
    "gemini-3.1-pro-preview",
    "gpt-5.1",
    "gpt-5.4-mini-2026-03-17",
}


@pytest.fixture(scope="module")
def reference() -> Path:
    return reference_dir()


def test_reference_traces_match_the_trust_importer(reference: Path) -> None:
    games = 0
    for trace in iter_reference_traces(reference):
        counted = {g["game"]: g["verifications"] for g in import_reference_run(trace.path).games}
        for game in trace.games:
            games += 1
            verifications = [
                c for r in game.rounds for c in r.choices if c.action == "verify" and c.seat != "D"
            ]
            assert len(verifications) == counted[game.game], (trace.run_id, game.game)
            for rnd in game.rounds:
                # every verification was announced, every submitted password parsed (4 capsules)
                assert len(rnd.verifications) == sum(c.action == "verify" for c in rnd.choices)
                if any(c.action == "volunteer" for c in rnd.choices):
                    assert rnd.password is not None and len(rnd.password) == 4
    assert games == 1786


@pytest.mark.slow
def test_reference_summary_per_model_and_schedule(reference: Path) -> None:
    """Every run is read; one run per model x schedule is scored (the whole set: the benchmark)."""
    loaded = load([reference])
    assert len(loaded.runs) == 172 and sum(len(r.games) for r in loaded.runs) == 1786
    first = {}
    for run in loaded.runs:
        first.setdefault((run.model, run.schedule), run)
    runs = list(first.values())
    d, checks = decisions_table(runs, prior=(1.0, 1.0), variant="team")
    s = summarise(d, n_resamples=200)
    v = validate(d, checks, n_decisions=10, n_sims=2000)
    assert set(s["model"]) == MODELS and set(s["source"]) == {"reference"} and len(s) == len(runs)
    assert {"smooth", "1strike"} <= set(s[s["model"] == "gpt-5.1"]["schedule"])
    with_interval = s["regret_low"].notna()  # one session is one cluster: too few for an interval
    assert ((s["regret_low"] <= s["regret_mean"]) & (s["regret_mean"] <= s["regret_high"]))[
        with_interval
    ].all()
    assert (s.loc[~with_interval, "note"] != "").all()
    assert s["n_decisions"].sum() == len(d) and set(d["model_version"]) == {"v2"}
    # the study's models leave expected score on the table under the yardstick
    assert (s["regret_mean"] > 0).all()
    assert (v["z"].abs() < 5).all()
