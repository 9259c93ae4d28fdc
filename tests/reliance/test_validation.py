"""Malformed scenarios and blueprints give clear errors naming the file and the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from games.reliance.loader import load_blueprint_file
from games.reliance.rules import ScenarioError, parse_scenario

BASE = {
    "id": "v",
    "category": "c",
    "setting": "s",
    "channels": {"P": {"prior": {"good": 0.7, "bad": 0.3}, "success": {"good": 0.9, "bad": 0.3}}},
    "actions": {
        "delegate": {"rely": ["P"], "feedback": "channels"},
        "backup": {"kind": "backup", "fee": 3, "success_prob": 1},
    },
    "stages": [
        {"loss": 10, "actions": ["delegate", "backup"]},
        {"loss": 10, "actions": ["delegate", "backup"]},
    ],
}


def _with(path: str, value):
    d = copy.deepcopy(BASE)
    cur = d
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if p.isdigit() else cur[p]
    last = parts[-1]
    cur[int(last) if last.isdigit() else last] = value
    return d


@pytest.mark.parametrize(
    ("path", "value", "key", "text"),
    [
        ("channels.P.success.good", 1.3, "channels.P.success.good", "outside [0, 1]"),
        ("channels.P.prior", {"good": 0.7, "bad": 0.2}, "channels.P.prior", "sum to 0.9"),
        ("stages.1.actions", ["delegate", "teleport"], "stages[1].actions", "unknown action 'teleport'"),
        (
            "transitions",
            [{"after": 2, "channel": "P", "kernel": {"keep": 0.5, "redraw": {"good": 1}}}],
            "transitions[0].after",
            "can never affect",
        ),
        (
            "transitions",
            [{"after": 1, "channel": "P", "kernel": {"bad": {"good": 0.5, "bad": 0.6}}}],
            "transitions[0].kernel.bad",
            "sum to 1.1",
        ),
        (
            "transitions",
            [{"after": 1, "channel": "Z", "kernel": {}}],
            "transitions[0].channel",
            "unknown channel",
        ),
        ("actions.delegate.rely", ["Z"], "actions.delegate.rely", "unknown channel"),
        ("actions.spare", {"kind": "backup", "fee": 1, "success_prob": 1}, "actions.spare", "unreachable"),
        ("actions.delegate.kind", "pray", "actions.delegate.kind", "unknown kind"),
    ],
)
def test_errors_name_the_key(path, value, key, text):
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_with(path, value), "somefile.yaml")
    assert err.value.key == key
    assert text in str(err.value)
    assert str(err.value).startswith("somefile.yaml: ")


def test_test_action_at_a_job_stage_is_rejected():
    d = _with("actions.look", {"kind": "test", "signal": {"channel": "P", "pass": {"good": 0.9, "bad": 0.1}}})
    d["stages"][0]["actions"].append("look")
    with pytest.raises(ScenarioError, match="does not carry out the stage's job"):
        parse_scenario(d, "f.yaml")


def test_blueprint_errors_name_file_and_blueprint(tmp_path: Path):
    src = Path("games/reliance/blueprints/01_route_planning.yaml")
    data = yaml.safe_load(src.read_text())
    data["blueprints"][1]["channels"]["Q"]["prior"] = 1.5
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        load_blueprint_file(bad)
    assert err.value.where == str(bad)
    assert err.value.key == "blueprints[1].channels.Q.prior"
    data["blueprints"][0]["processes"] = ["teleportation"]
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError, match="unknown process 'teleportation'"):
        load_blueprint_file(bad)
