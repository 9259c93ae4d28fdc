"""A job's identity, from its validated config: the config hash, the world hash and the run id.

- The **config hash** covers everything that changes results: the recorded config without the execution
  groups (``llm``, ``hydra``) and without every field marked ``execution=True`` (:func:`trustsim.schema.opt`).
- The **world hash** covers the fields marked ``world=True`` of the root options, the game's options and the
  game's own groups, and nothing else: it roots the seed tree (:class:`trustsim.seeding.SeedTree`), so an
  agent, a model or an execution setting changes no world stream. World keys are field markings, so a world
  key that names no field cannot exist.
- The **run id** is ``<name>-<config hash[:12]>``: the same resolved config gives the same id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trustsim.config import EXECUTION_GROUPS, RootOptions, Validated
from trustsim.contract import GameSpec
from trustsim.llm.config import ModelConfig
from trustsim.schema import fields_with
from trustsim.seeding import SeedTree, stable_hash


@dataclass(frozen=True)
class Identity:
    """What names a job and roots its randomness."""

    config_hash: str
    world_hash: str
    run_id: str

    def seeds(self) -> SeedTree:
        """The job's seed tree (rooted at the world hash)."""
        return SeedTree(self.world_hash)


def identify(valid: Validated) -> Identity:
    """The identity of a validated job."""
    digest = config_hash(valid.cfg, valid.game)
    return Identity(
        digest, world_hash(valid.cfg, valid.game), f"{valid.cfg.get('name', 'run')}-{digest[:12]}"
    )


def _paths(spec: GameSpec, role: str) -> Iterator[str]:
    """Dotted config paths of the fields marked ``role`` (root options, the model config, the game's options
    and groups)."""
    yield from fields_with(RootOptions, role)
    yield from (f"model.{name}" for name in fields_with(ModelConfig, role))
    yield from (f"game.{name}" for name in fields_with(spec.options, role))
    for group, schema in spec.groups.items():
        yield from (f"{group}.{name}" for name in fields_with(schema, role))


def world_keys(spec: GameSpec) -> tuple[str, ...]:
    """The dotted paths whose values define the game's world (fields marked ``world=True``)."""
    return tuple(_paths(spec, "world"))


def execution_keys(spec: GameSpec) -> tuple[str, ...]:
    """The dotted paths that change how a job runs, not what it computes (fields marked ``execution=True``)."""
    return tuple(_paths(spec, "execution"))


def _get(cfg: dict[str, Any], path: str) -> Any:
    node: Any = cfg
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _drop(cfg: dict[str, Any], path: str) -> dict[str, Any]:
    head, _, rest = path.partition(".")
    if head not in cfg:
        return cfg
    if not rest:
        return {k: v for k, v in cfg.items() if k != head}
    if not isinstance(cfg[head], dict):
        return cfg
    return {**cfg, head: _drop(cfg[head], rest)}


def config_hash(cfg: dict[str, Any], spec: GameSpec) -> str:
    """Hash of everything that changes results: not the call layer, progress or execution settings."""
    semantic = {k: v for k, v in cfg.items() if k not in EXECUTION_GROUPS}
    for path in execution_keys(spec):
        semantic = _drop(semantic, path)
    return stable_hash(semantic)


def world_hash(cfg: dict[str, Any], spec: GameSpec) -> str:
    """Hash of the world keys' values and nothing else (the root of every world stream)."""
    return stable_hash({"game": spec.name, **{path: _get(cfg, path) for path in world_keys(spec)}})
