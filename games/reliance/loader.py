"""Load blueprint files (``blueprints/*.yaml``) and explicit scenario files (``scenarios/*.yaml``).

A blueprint file holds one collaboration category::

    category: route planning with two advisers
    defaults: {...}          # optional keys merged into every blueprint (blueprint keys win)
    blueprints: [{id: ..., setting: ..., channels: ..., ...}, ...]

A scenario file holds fully explicit scenarios (``scenarios: [...]``, see :mod:`games.reliance.rules`).
Errors name the file and the key path.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from games.reliance.processes import expand_blueprint
from games.reliance.rules import Scenario, ScenarioError, parse_scenario

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PACKAGE_DIR = Path(__file__).resolve().parent
BLUEPRINT_DIR = PACKAGE_DIR / "blueprints"
SCENARIO_DIR = PACKAGE_DIR / "scenarios"


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise ScenarioError(str(path), "<file>", f"invalid YAML: {exc}") from exc
    except OSError as exc:
        raise ScenarioError(str(path), "<file>", f"cannot read: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ScenarioError(str(path), "<root>", "expected a mapping at the top level")
    return data


def _merge(defaults: Mapping[str, Any], bp: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(defaults))
    for k, v in bp.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = {**out[k], **v}
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_blueprint_file(path: Path) -> tuple[str, list[Scenario]]:
    """Expand and validate every blueprint of one category file; returns (category, scenarios)."""
    data = _read(path)
    where = str(path)
    for k in data:
        if k not in ("category", "defaults", "blueprints"):
            raise ScenarioError(where, k, "unknown key; expected category, defaults, blueprints")
    category = data.get("category")
    if not isinstance(category, str) or not category.strip():
        raise ScenarioError(where, "category", "missing or empty category name")
    defaults = data.get("defaults", {}) or {}
    if not isinstance(defaults, Mapping):
        raise ScenarioError(where, "defaults", "expected a mapping")
    bps = data.get("blueprints")
    if not isinstance(bps, list) or not bps:
        raise ScenarioError(where, "blueprints", "expected a non-empty list")
    out: list[Scenario] = []
    for i, bp in enumerate(bps):
        key = f"blueprints[{i}]"
        if not isinstance(bp, Mapping):
            raise ScenarioError(where, key, "expected a mapping")
        merged = _merge(defaults, bp)
        for d in expand_blueprint(merged, category.strip(), where, key):
            out.append(parse_scenario(d, where, f"{key}<{d['process']}>"))
    return category.strip(), out


def load_scenario_file(path: Path) -> list[Scenario]:
    """Parse every explicit scenario of one file."""
    data = _read(path)
    items = data.get("scenarios")
    if not isinstance(items, list) or not items:
        raise ScenarioError(str(path), "scenarios", "expected a non-empty list")
    return [parse_scenario(s, str(path), f"scenarios[{i}]") for i, s in enumerate(items)]


def load_all(paths: Iterable[Path] | None = None) -> list[Scenario]:
    """Every scenario from the blueprint files (sorted by file name); ids must be unique."""
    files = sorted(paths) if paths is not None else sorted(BLUEPRINT_DIR.glob("*.yaml"))
    seen: dict[str, str] = {}
    out: list[Scenario] = []
    for f in files:
        _, scns = load_blueprint_file(f)
        for s in scns:
            if s.id in seen:
                raise ScenarioError(str(f), s.id, f"duplicate scenario id (also in {seen[s.id]})")
            seen[s.id] = str(f)
            out.append(s)
    return out
