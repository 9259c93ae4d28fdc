"""Strict configuration: every group validated once, into typed objects that the run passes on.

``validate_config(cfg)`` checks the composed, resolved config group by group with the one validator
(:mod:`trustsim.schema`): the root keys against :class:`RootOptions`, ``game`` against its
:class:`~trustsim.contract.GameSpec`'s options, ``agent`` against the registered agent's params, the groups the
game declares (``GameSpec.groups``), ``model`` and ``llm`` against :mod:`trustsim.llm.config` and ``card``
against :class:`CardOptions`. It rejects unknown keys naming the closest valid one, runs the game's
cross-group ``check`` and reports every setting that has no effect in the chosen combination (an error or a
printed warning). The result, :class:`Validated`, holds the plain config the run records (and hashes:
:mod:`trustsim.identity`) and the typed objects built from it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from trustsim.contract import AgentSpec, GameSpec, agent_spec, agents_for, game_spec, games
from trustsim.errors import ConfigError
from trustsim.llm.config import LLMConfig, ModelConfig, parse_llm_config
from trustsim.schema import build, check_section, opt, plain_mapping, unknown_key, values_of
from trustsim.secrets import config_problem

CORE_GROUPS = ("game", "agent", "model", "llm")
"""Config groups every job has (a game declares its own others: ``GameSpec.groups``)."""

EXECUTION_GROUPS = ("hydra", "llm")
"""Top-level keys that change how a run executes, not what it computes (left out of the config hash)."""

DEFAULT_NAME = "default"
"""The name of a job whose config sets none and whose game names it no other way (``GameSpec.run_name``)."""


MAX_RUNS = 1_000_000
"""The most ``runs`` a job may have (a typo such as ``runs=1000000000000`` would run until killed)."""


@dataclass(frozen=True)
class RootOptions:
    """Top-level keys of ``conf/config.yaml`` (the groups are validated separately)."""

    name: str = DEFAULT_NAME
    seed: int = opt(0, min=0, world=True)  # the root seed: with the game's world keys it fixes every draw
    runs: int = opt(1, min=1, max=MAX_RUNS)
    progress: Literal["auto", True, False] = opt("auto", execution=True)
    # play with a stand-in model, send nothing, print requests/tokens/cost (trustsim.preview)
    preview: bool = opt(False, execution=True)

    def check(self, key: str) -> None:
        if (problem := label_problem(self.name)) is not None:
            raise ConfigError("name", problem)


@dataclass(frozen=True)
class CardOptions:
    """The ``card`` key of the trust-card battery (``+experiment=trustcard``; parts in ``conf/card/``).

    A run keeps ``size`` and, for a part's job, ``part`` and ``family``; the size table and the job name only
    shape the composed config."""

    size: Literal["full", "small", "smoke"] = "full"
    part: str | None = None  # the part this job plays (conf/card/part/<part>.yaml)
    family: str = ""  # the game family of the part (the card's section)
    sizes: dict[str, Any] = field(default_factory=dict)  # size -> the part's values at that size
    job_name: str | None = None  # names the part's jobs (the experiment's name reads it)

    def record(self) -> dict[str, Any]:
        """What a run's config keeps of the card."""
        kept: dict[str, Any] = {"size": self.size}
        if self.part is not None:
            kept.update(part=self.part, family=self.family)
        return kept


def label_problem(name: Any) -> str | None:
    """Why ``name`` cannot be the experiment's label (None when it can): it names the run directory
    (``outputs/runs/<date>/<time>_<name>``) and the run id, so it must be one non-empty path component."""
    text = "" if name is None else str(name)
    if not text.strip():
        return "expected a non-empty experiment name (it names the run directory), e.g. name=my-run"
    if "/" in text or "\\" in text or ".." in text or any(ord(c) < 32 for c in text):
        return (
            f"{text!r} is not a label: no '/', '\\', '..' or control characters (it names the run directory "
            "and the run id); e.g. name=my-run"
        )
    return None


@dataclass
class Validated:
    """A validated job configuration: the plain record and the typed objects built from it."""

    cfg: dict[str, Any]  # plain, normalised config (unused groups removed): recorded and hashed
    game: GameSpec
    agent: AgentSpec
    root: RootOptions
    options: Any  # an instance of game.options
    groups: dict[str, Any]  # the game's other groups (GameSpec.groups), typed
    agent_params: dict[str, Any]  # the validated agent group without its name
    model: ModelConfig | None  # None when no agent of the job calls a model
    llm: LLMConfig
    uses_llm: bool
    card: CardOptions | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """A job's config as its game's hooks see it (``GameSpec.uses_llm``, ``GameSpec.check``): every group
    validated and typed. ``check`` may normalise it by replacing :attr:`options` or one of :attr:`groups` with
    an updated instance (``dataclasses.replace``): the run's record, hence its manifest and hashes, holds the
    replaced values (:func:`record_of`)."""

    options: Any  # an instance of the game's options
    groups: dict[str, Any]  # the game's other groups (GameSpec.groups), typed
    agent: AgentSpec
    agent_params: dict[str, Any]
    model: ModelConfig | None = None  # the job's model; None in ``uses_llm``, and for a job without an LLM


def record_of(instance: Any) -> dict[str, Any]:
    """What a run's config records of a validated group: its values, a nested group (e.g. ``game.seats``)
    as a plain mapping, left out when it holds its default (settings that change nothing leave no trace)."""
    out: dict[str, Any] = {}
    defaults = {f.name: f for f in dataclasses.fields(instance)}
    for name, value in values_of(instance).items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            f = defaults[name]
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if value == default:
                continue
            value = dataclasses.asdict(value)
        out[name] = value
    return out


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
        value = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = getattr(exc, "full_key", "?") or "?"
        raise ConfigError(key, f"{key} is required (e.g. {key}=...)") from None
    except Exception as exc:  # interpolation errors name the key in their message
        raise ConfigError(getattr(exc, "full_key", "?") or "?", str(exc).splitlines()[0]) from None
    return plain_mapping(value, "config")


def mapping_of(node: Any, key: str) -> dict[str, Any]:
    """A config node (``DictConfig``) resolved into a plain mapping; a ConfigError at ``key`` when it holds none."""
    from omegaconf import OmegaConf

    return plain_mapping(OmegaConf.to_container(node, resolve=True), key)


def run_name(*, _root_: Any) -> str:
    """Resolver ``${trustsim_run_name:}`` (``name`` in ``conf/config.yaml``; a preset or ``name=`` replaces it):
    the game's name for a job that sets none (``GameSpec.run_name``, e.g. ``custom-TTFFT``), else
    :data:`DEFAULT_NAME`. Reads only the ``game`` group and the game's own groups, validated; never fails
    (a bad value is reported by validation, naming its key)."""
    from omegaconf import OmegaConf

    try:
        spec = games().get(str(OmegaConf.select(_root_, "game.type", default="")))
        if spec is None or spec.run_name is None:
            return DEFAULT_NAME
        game = mapping_of(_root_["game"], "game")
        options = build(spec.options, {k: v for k, v in game.items() if k != "type"}, "game")
        groups = {
            group: build(schema, mapping_of(_root_[group], group), group)
            for group, schema in spec.groups.items()
        }
        name = spec.run_name(options, groups)
    except Exception:  # validation reports the broken value with its key
        return DEFAULT_NAME
    if not isinstance(name, str) or not name.strip():
        return DEFAULT_NAME
    return short_name(name)


MAX_AUTO_NAME = 64
"""The longest automatic run name kept as it is (it names the run directory, whose name has at most 255 bytes)."""


def short_name(name: str) -> str:
    """``name``, or for one longer than :data:`MAX_AUTO_NAME` its start and a hash of the whole
    (``custom-TTFF...-<12 hex>``): distinct names stay distinct, and the folder name fits the filesystem."""
    if len(name.encode("utf-8")) <= MAX_AUTO_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    return f"{name[: MAX_AUTO_NAME - 13]}-{digest}"


def register_resolvers() -> None:
    """Register the resolvers ``conf/`` uses (idempotent)."""
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("trustsim_run_name"):
        OmegaConf.register_new_resolver("trustsim_run_name", run_name)


register_resolvers()  # before any composition (the CLI's run directory is named from ``name``)


def conf_option(group: str, name: str) -> dict[str, Any]:
    """The values of ``conf/<group>/<name>.yaml``: the one reader of a group's option outside Hydra's
    composition (a seat's model preset, a group's default); its caller validates them with the group's
    schema. Raises OSError or yaml.YAMLError; ConfigError at ``group`` when the file holds no mapping."""
    data = yaml.safe_load((conf_dir() / group / f"{name}.yaml").read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ConfigError(group, f"conf/{group}/{name}.yaml is not a mapping")
    return data


@functools.cache
def default_option(group: str) -> str | None:
    """The name of ``group``'s default option in ``conf/config.yaml`` (None when there is none)."""
    try:
        primary = yaml.safe_load((conf_dir() / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    for entry in primary.get("defaults", []):
        if isinstance(entry, dict) and isinstance(entry.get(group), str):
            return str(entry[group])
    return None


def is_default(group: str, schema: type, values: Any) -> bool:
    """Whether ``values`` validate (with ``schema``) to the same object as ``group``'s default option."""
    name = default_option(group)
    if name is None:
        return False
    try:
        return build(schema, values, group) == build(schema, conf_option(group, name), group)
    except (ConfigError, OSError, yaml.YAMLError):
        return False


def _group(cfg: dict[str, Any], name: str, example: str = "") -> dict[str, Any]:
    value = cfg.get(name)
    if not isinstance(value, dict):
        raise ConfigError(name, f"missing config group; choose one, e.g. {example or f'{name}=...'}")
    return value


def _example_job() -> str:
    """The game and agent of a registered game's example job (``game=... agent=...``), for error messages."""
    for spec in games().values():
        chosen = [o for o in spec.example if o.startswith(("game=", "agent="))]
        if len(chosen) == 2:
            return " ".join(chosen)
    return "game=<game> agent=<agent>"


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


def _top_level_keys() -> list[str]:
    """Every key the root of a config may hold: root options, core groups, every game's own groups, card."""
    own_groups = {group for spec in games().values() for group in spec.groups}
    return [*RootOptions.__dataclass_fields__, *CORE_GROUPS, *sorted(own_groups), "card"]


def validate_config(cfg: dict[str, Any], overrides: list[str] | tuple[str, ...] | None = None) -> Validated:
    """Validate every group of a composed, resolved config; raise ConfigError naming the first bad key.

    ``overrides`` (the command line's, when known) decides which ineffective settings the user chose
    (warned about) and which came with a preset or a shared group file (dropped silently)."""
    explicit = explicit_keys(overrides) if overrides is not None else None
    warnings: list[str] = []
    valid_keys = _top_level_keys()
    if (secret := config_problem({k: v for k, v in cfg.items() if k != "hydra"})) is not None:
        raise ConfigError(*secret)  # the command line's preflight refuses it first; trustsim.api too
    for key in cfg:
        if key not in valid_keys and key != "hydra":
            raise unknown_key("", key, valid_keys)
    root = build(RootOptions, {k: v for k, v in cfg.items() if k in RootOptions.__dataclass_fields__}, "")
    game_cfg = _group(cfg, "game", _example_job())
    agent_cfg = _group(cfg, "agent", _example_job())
    gtype = game_cfg.get("type")
    if not isinstance(gtype, str) or not gtype:
        raise ConfigError(
            "game.type", f"missing; the game group names its game, e.g. type: {next(iter(games()), '?')}"
        )
    spec = game_spec(gtype)
    options = build(spec.options, {k: v for k, v in game_cfg.items() if k != "type"}, "game")
    name = agent_cfg.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("agent.name", f"expected a non-empty string, got {name!r}")
    agent = agent_spec(spec.name, name)
    params = _agent_params(agent, {k: v for k, v in agent_cfg.items() if k != "name"}, warnings, explicit)

    out: dict[str, Any] = {k: v for k, v in cfg.items() if k != "hydra"}
    card = build(CardOptions, out["card"], "card") if "card" in out else None
    if card is not None:
        out["card"] = card.record()
    groups: dict[str, Any] = {}
    for group in sorted({g for s in games().values() for g in s.groups}):
        if group in spec.groups:
            groups[group] = build(spec.groups[group], _group(cfg, group), group)
        elif group in out:
            value = out.pop(group)
            schema = next(s.groups[group] for s in games().values() if group in s.groups)
            if not is_default(group, schema, value):
                warnings.append(f"'{group}' has no effect in game {spec.name!r} (it does not read it)")
    draft = Draft(options, groups, agent, params)
    uses_llm = spec.uses_llm(draft) if spec.uses_llm is not None else agent.uses_llm
    llm = parse_llm_config(out.get("llm") or {})
    if uses_llm:
        draft.model = build(ModelConfig, _model_group(out), "model")
    elif out.get("model") is not None:
        dropped = out.pop("model")
        if not is_default("model", ModelConfig, dropped) and dropped != {"name": "scripted"}:
            warnings.append(
                f"'model' ({dropped.get('name') if isinstance(dropped, dict) else dropped}) has no effect: "
                f"agent {agent.name!r} makes no LLM calls"
            )
    if spec.check is not None:
        warnings.extend(spec.check(draft) or [])
    # The record follows the typed objects the check may have normalised, so what the run uses and what its
    # manifest records never disagree.
    out["game"] = {"type": spec.name, **record_of(draft.options)}
    out["agent"] = {"name": agent.name, **params}
    for group, instance in draft.groups.items():
        out[group] = record_of(instance)
    return Validated(
        cfg=out,
        game=spec,
        agent=agent,
        root=root,
        options=draft.options,
        groups=draft.groups,
        agent_params=params,
        model=draft.model,
        llm=llm,
        uses_llm=uses_llm,
        card=card,
        warnings=warnings,
    )


def _model_group(cfg: dict[str, Any]) -> dict[str, Any]:
    model = cfg.get("model")
    if model is None:
        raise ConfigError("model", "missing (expected a mapping)")
    return model
