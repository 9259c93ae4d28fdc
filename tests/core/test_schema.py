"""The one validator (trustsim.schema): field roles, the cross-field hook, typed mappings, instantiation, the one
did-you-mean; and the identity derived from the field roles (trustsim.identity)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from trustsim.contract import GameSpec
from trustsim.errors import ConfigError
from trustsim.identity import config_hash, execution_keys, world_hash, world_keys
from trustsim.schema import build, check_section, did_you_mean, fields_with, instantiate, opt


@dataclass(frozen=True)
class Inner:
    low: int = 0
    high: int = 10

    def check(self, key: str) -> None:
        if self.high < self.low:
            raise ConfigError(f"{key}.high", f"must be >= {key}.low ({self.low}), got {self.high}")


@dataclass(frozen=True)
class Outer:
    size: int = opt(3, min=1, world=True)
    mode: Literal["a", "b"] = opt("a", world=True)
    workers: int = opt(2, min=1, execution=True)
    bounds: Inner = field(default_factory=Inner)
    maybe: Inner | None = None
    groups: dict[str, dict[str, int] | None] = field(default_factory=dict)


def test_roles_are_field_marks():
    assert list(fields_with(Outer, "world")) == ["size", "mode"]
    assert list(fields_with(Outer, "execution")) == ["workers"]
    with pytest.raises(ValueError, match="both"):
        opt(1, world=True, execution=True)


def test_the_cross_field_hook_names_the_key_also_nested():
    with pytest.raises(ConfigError, match=r"'game\.bounds\.high': must be >= game\.bounds\.low"):
        build(Outer, {"bounds": {"low": 5, "high": 1}}, "game")
    with pytest.raises(ConfigError, match=r"'inner\.high'"):
        check_section({"low": 2, "high": 1}, Inner, "inner")


def test_typed_mappings_check_their_values_naming_each_key():
    assert build(Outer, {"groups": {"x": {"n": 1}, "y": None}}, "game").groups == {"x": {"n": 1}, "y": None}
    with pytest.raises(ConfigError, match=r"'game\.groups\.x\.n': expected an integer"):
        build(Outer, {"groups": {"x": {"n": "one"}}}, "game")


def test_instantiate_builds_nested_dataclasses_from_validated_values():
    values = check_section({"size": 4}, Outer, "game")
    made = instantiate(Outer, {**values, "bounds": {"low": 1, "high": 2}, "maybe": {"low": 3}})
    assert made.bounds == Inner(1, 2) and made.maybe == Inner(3, 10) and made.size == 4


def test_one_did_you_mean():
    assert did_you_mean("coin", ["coins", "games"]) == "; did you mean 'coins'?"
    assert did_you_mean("coin", ["coins"], lambda h: f"game={h}") == "; did you mean game=coins?"
    assert did_you_mean("zzz", ["coins"]) == ""
    with pytest.raises(ConfigError, match=r"'game\.sise': unknown key; did you mean 'game\.size'\?"):
        build(Outer, {"sise": 2}, "game")


def test_the_world_is_what_the_world_fields_hold():
    spec = GameSpec(name="probe", options=Outer, tables={}, run=lambda ctx: None)
    assert world_keys(spec) == ("seed", "game.size", "game.mode") and execution_keys(spec) == (
        "progress",
        "preview",
        "model.limits",
        "game.workers",
    )
    cfg = {"seed": 0, "progress": "auto", "game": {"type": "probe", "size": 3, "mode": "a", "workers": 2}}
    faster = {**cfg, "progress": False, "game": {**cfg["game"], "workers": 8}}
    bigger = {**cfg, "game": {**cfg["game"], "size": 4}}
    assert world_hash(faster, spec) == world_hash(cfg, spec) and config_hash(faster, spec) == config_hash(
        cfg, spec
    )
    assert world_hash(bigger, spec) != world_hash(cfg, spec) and config_hash(bigger, spec) != config_hash(
        cfg, spec
    )
