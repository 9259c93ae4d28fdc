"""Strict configuration: every group validated against its schema, and the hashes of a run and its world.

``validate_config(cfg)`` checks the composed, resolved config group by group (``game`` against its
:class:`~trustsim.contract.GameSpec`'s options, ``agent`` against the registered agent's params, ``model``
and ``llm`` with :mod:`trustsim.llm.config`, ``memory``/``schedule`` against the schemas the game declares),
rejects unknown keys naming the closest valid one, runs the game's cross-field ``check`` and reports every
setting that has no effect in the chosen combination (an error or a printed warning).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trustsim.contract import AgentSpec, GameSpec, agent_spec, agents_for, game_spec, games
from trustsim.errors import ConfigError
from trustsim.schema import check_section, opt, unknown_key
from trustsim.seeding import stable_hash

# Keys that change how a run executes but not what it computes (left out of the config hash).
NON_SEMANTIC_KEYS = ("hydra", "llm", "progress", "preview")
GROUPS = ("game", "agent", "model", "memory", "schedule", "llm")


@dataclass(frozen=True)
class RootOptions:
    """Top-level keys of ``conf/config.yaml`` (the groups are validated separately)."""

    name: str = "default"
    seed: int = opt(0, min=0)
    runs: int = opt(1, min=1)
    progress: Literal["auto", True, False] = "auto"
    preview: bool = (
        False  # play with a stand-in model, send nothing, print requests/tokens/cost (trustsim.preview)
    )


@dataclass
class Validated:
    """A validated job configuration."""

    cfg: dict[str, Any]  # plain, normalised config (unused groups removed)
    game: GameSpec
    agent: AgentSpec
    options: Any  # an instance of game.options
    agent_params: dict[str, Any]
    uses_llm: bool
    warnings: list[str] = field(default_factory=list)


def conf_dir() -> Path:
    """The Hydra config directory: ``conf/`` of a checkout, else the copy installed with the package."""
    here = Path(__file__).resolve().parent
    checkout = here.parent / "conf"
    if (checkout / "config.yaml").is_file() and (checkout / "game").is_dir():
        return checkout
    return here / "conf"


def to_container(cfg: Any) -> dict[str, Any]:
    """Resolve a DictConfig into plain containers; interpolation/missing-value errors name the key."""
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue

    try:
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)  # type: ignore[return-value]
    except MissingMandatoryValue as exc:
        key = getattr(exc, "full_key", "?") or "?"
        raise ConfigError(key, f"{key} is required (e.g. {key}=...)") from None
    except Exception as exc:  # interpolation errors name the key in their message
        raise ConfigError(getattr(exc, "full_key", "?") or "?", str(exc).splitlines()[0]) from None


@functools.cache
def default_group(group: str) -> dict[str, Any] | None:
    """The values of ``group``'s default option in ``conf/config.yaml`` (None when there is none)."""
    import yaml

    root = conf_dir()
    try:
        primary = yaml.safe_load((root / "config.yaml").read_text())
        for entry in primary.get("defaults", []):
            if isinstance(entry, dict) and group in entry:
                return yaml.safe_load((root / group / f"{entry[group]}.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    return None


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


def _group(cfg: dict[str, Any], name: str, example: str) -> dict[str, Any]:
    value = cfg.get(name)
    if not isinstance(value, dict):
        raise ConfigError(name, f"missing config group; choose one, e.g. {example}")
    return value


def explicit_keys(overrides: list[str] | tuple[str, ...]) -> set[str]:
    """Dotted keys the user set on the command line (``agent.prompt=x``, ``+game.coins=2``)."""
    keys = set()
    for item in overrides:
        key = item.split("=", 1)[0].lstrip("+~")
        if "=" in item and "/" not in key:
            keys.add(key)
    return keys


def _agent_params(
    agent: AgentSpec, data: dict[str, Any], warnings: list[str], explicit: set[str] | None = None
) -> dict[str, Any]:
    """Validate the agent group. A key that only a same-named agent of another game reads (``agent=llm``
    shares one yaml across games), or another agent of this game (a preset's ``agent.prompt``), is dropped,
    with a warning when the user set it (``explicit``; unknown: when it is not at that agent's default)."""
    import dataclasses

    own = {f.name for f in dataclasses.fields(agent.params)}
    foreign: dict[str, Any] = {}
    for game, agents in ((g, agents_for(g)) for g in games()):
        # Same-named agents of other games, and (for keys a preset sets for one agent, e.g. the study
        # presets' agent.prompt) the other agents of this game.
        others = (
            [a for n, a in agents.items() if n != agent.name]
            if game == agent.game
            else [agents.get(agent.name)]
        )
        for other in others:
            if other is None:
                continue
            for f in dataclasses.fields(other.params):
                if f.name not in own and f.name not in foreign:
                    foreign[f.name] = f.default if f.default is not dataclasses.MISSING else None
    kept = {k: v for k, v in data.items() if k not in foreign or k in own}
    for key in sorted(set(data) - set(kept)):
        if (f"agent.{key}" in explicit) if explicit is not None else (data[key] != foreign[key]):
            warnings.append(f"'agent.{key}' has no effect for agent {agent.name!r} in game {agent.game!r}")
    try:
        return check_section(kept, agent.params, "agent")
    except ConfigError as exc:
        if exc.message.startswith("unknown key") and foreign:
            valid = own | set(foreign)
            raise unknown_key("agent.", exc.key.rpartition(".")[2], valid) from None
        raise


def validate_config(cfg: dict[str, Any], overrides: list[str] | tuple[str, ...] | None = None) -> Validated:
    """Validate every group of a composed, resolved config; raise ConfigError naming the first bad key.

    ``overrides`` (the command line's, when known) decides which ineffective settings the user chose
    (warned about) and which came with a preset or a shared group file (dropped silently)."""
    explicit = explicit_keys(overrides) if overrides is not None else None
    warnings: list[str] = []
    for key in cfg:
        if key not in GROUPS and key not in RootOptions.__dataclass_fields__ and key not in ("hydra", "card"):
            raise unknown_key("", key, [*RootOptions.__dataclass_fields__, *GROUPS])
    check_section({k: v for k, v in cfg.items() if k in RootOptions.__dataclass_fields__}, RootOptions, "")
    if not str(cfg.get("name", "default")).strip():
        raise ConfigError("name", "expected a non-empty experiment name (it names the run directory)")
    game_cfg = _group(cfg, "game", "game=escape_room agent=bayes")
    agent_cfg = _group(cfg, "agent", "game=escape_room agent=bayes")
    gtype = game_cfg.get("type")
    if not isinstance(gtype, str) or not gtype:
        raise ConfigError(
            "game.type", f"missing; the game group names its game, e.g. type: {next(iter(games()), '?')}"
        )
    spec = game_spec(gtype)
    options_values = check_section({k: v for k, v in game_cfg.items() if k != "type"}, spec.options, "game")
    options = spec.options(**options_values)
    name = agent_cfg.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("agent.name", f"expected a non-empty string, got {name!r}")
    agent = agent_spec(spec.name, name)
    params = _agent_params(agent, {k: v for k, v in agent_cfg.items() if k != "name"}, warnings, explicit)

    out: dict[str, Any] = {k: v for k, v in cfg.items() if k != "hydra"}
    if "card" in out:  # the trust-card battery's part and size (trustsim/battery.py)
        from trustsim.battery import check_card

        out["card"] = check_card(out["card"])
    out["game"] = {"type": spec.name, **options_values}
    out["agent"] = {"name": agent.name, **params}
    for group in ("memory", "schedule"):
        if group in spec.groups:
            out[group] = check_section(_group(cfg, group, f"{group}=..."), spec.groups[group], group)
        elif group in out:
            value = out.pop(group)
            if value != default_group(group):
                warnings.append(f"'{group}' has no effect in game {spec.name!r} (it does not read it)")
    if spec.check is not None:
        warnings.extend(spec.check(out, agent) or [])
    uses_llm = spec.uses_llm(out, agent) if spec.uses_llm is not None else agent.uses_llm
    from trustsim.llm.config import parse_llm_config, parse_model_config

    parse_llm_config(out.get("llm") or {})
    model = out.get("model")
    if uses_llm:
        parse_model_config(model)
    elif model is not None:
        out.pop("model")
        if model != default_group("model") and model != {"name": "scripted"}:
            warnings.append(
                f"'model' ({model.get('name') if isinstance(model, dict) else model}) has no effect: "
                f"agent {agent.name!r} makes no LLM calls"
            )
    return Validated(out, spec, agent, options, params, uses_llm, warnings)


def print_warnings(warnings: list[str]) -> None:
    for message in warnings:
        print(f"trustsim: warning: {message}", file=sys.stderr)


def config_hash(cfg: dict[str, Any], spec: GameSpec | None = None) -> str:
    """Hash of everything that changes results: not the call layer, progress or execution settings."""
    semantic = {k: v for k, v in cfg.items() if k not in NON_SEMANTIC_KEYS}
    for path in spec.execution_keys if spec else ():
        semantic = _drop(semantic, path)
    return stable_hash(semantic)


def world_hash(cfg: dict[str, Any], spec: GameSpec) -> str:
    """Hash of the game's ``world_keys`` values and nothing else (the root of every world stream)."""
    return stable_hash({"game": spec.name, **{path: _get(cfg, path) for path in spec.world_keys}})
