"""Drills of the smaller defects: a well-formed answer with a 60 KB reasoning, run directories whose manifest
lost its identity, and an ``llm.store_dir`` that cannot be a shard directory."""

from __future__ import annotations

import csv
import json
import shutil
import warnings

import pytest

from agents.escape_room.llm_parse import parse_decision
from trustsim.llm import StoreError
from trustsim.llm.decision import extract_json
from trustsim.llm.fake_server import FakeServer
from trustsim.rundir import DataWarning, discover_runs

from ..llm.helpers import client_of, llm_dict, model_dict
from .helpers import llm_overrides, run_cli

LONG = json.dumps(
    {
        "action": "pass",
        "confidence": {"Q1": 0.9, "Q2": 0.8, "Q3": 0.7, "Q4": 0.6},
        "reasoning": "because " * 7500,
    }
)


def test_a_long_well_formed_answer_is_read_whole() -> None:
    assert len(LONG) > 60_000
    assert extract_json(LONG, ("action",))["reasoning"].startswith("because")
    assert extract_json("My answer:\n" + LONG + "\nthanks", ("action",))["action"] == "pass"
    parsed = parse_decision(LONG)
    assert (
        parsed.action is not None
        and parsed.error is None
        and parsed.confidence == {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6}
    )


@pytest.mark.slow
def test_a_long_answer_from_the_server_is_a_valid_move(tmp_path) -> None:
    """End to end against the fault server: every decision of a game valid, none ``invalid``."""
    with FakeServer(reply=LONG) as server:
        args = llm_overrides(
            server.api_base, tmp_path / "store.sqlite", "game.games=1", "agent.prompt=trustsim"
        )
        done = run_cli([*args, f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    with (tmp_path / "run" / "decisions.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["valid"] for r in rows} == {"true"} and {r["action"] for r in rows} == {"pass"}


def _scripted_run(tmp_path, name: str):
    done = run_cli(
        ["+experiment=mid2strike", "agent=bayes", "game.games=1", f"hydra.run.dir={tmp_path / name}"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp_path / name


def _strip_identity(run_dir) -> None:
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop("run_id"), manifest.pop("config_hash")
    path.write_text(json.dumps(manifest))


def test_a_manifest_without_identity_is_warned_about(tmp_path) -> None:
    original = _scripted_run(tmp_path, "original")
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert len(discover_runs([original, copy]).runs) == 1  # with its identity: one run
    assert any("duplicate" in str(w.message) for w in seen)
    _strip_identity(copy)
    with pytest.warns(DataWarning) as caught:
        found = discover_runs([original, copy])
    assert len(found.runs) == 2  # it cannot be recognised: counted, but never silently
    (message,) = [str(w.message) for w in caught if "no run identity" in str(w.message)]
    assert str(copy / "manifest.json") in message and f"identical to {original}" in message


@pytest.mark.parametrize("kind", ["a_file", "under_a_file"])
def test_a_store_dir_that_cannot_be_a_folder_gets_the_right_advice(tmp_path, kind) -> None:
    (tmp_path / "a_file").write_text("x")
    folder = tmp_path / "a_file" if kind == "a_file" else tmp_path / "a_file" / "shards"
    with pytest.raises(StoreError) as info:
        client_of(
            model_dict("http://127.0.0.1:9/v1", api_key_env=None),
            llm_dict(tmp_path / "s.sqlite", store_dir=str(folder)),
        )
    assert info.value.key == "llm.store_dir" and "replay_only" not in info.value.resume
    assert "names a folder of shards" in info.value.resume
