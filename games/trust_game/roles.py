"""Who plays each role: ``game.trustor`` / ``game.trustee`` (null = the ``agent`` group), validated by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from games.trust_game.types import ROLES, Player, Role
from trustsim.contract import AgentSpec, agent_spec
from trustsim.errors import ConfigError
from trustsim.llm.config import ModelConfig
from trustsim.llm.seat_model import OwnModel, resolve_model
from trustsim.schema import check_section

if TYPE_CHECKING:
    from games.trust_game.options import TrustGameOptions

GAME = "trust_game"


@dataclass(frozen=True)
class RoleSpec:
    """The agent of one role: its registered spec, validated parameters and the config key to blame."""

    role: Role
    name: str
    spec: AgentSpec
    params: dict[str, Any]
    key: str
    own_model: OwnModel | None = None  # the role's own model config (own client); None: the job's

    @property
    def uses_llm(self) -> bool:
        return self.spec.uses_llm

    @property
    def own_config(self) -> ModelConfig | None:
        """The role's own model config (None: the job's)."""
        return self.own_model.config if self.own_model is not None else None

    def model(self, job_model: ModelConfig | None) -> str:
        """The model behind the role: its own model config's name, the agent's ``model`` parameter, else the
        job's ``model`` group (``job_model``); or ``scripted``."""
        if not self.uses_llm:
            return "scripted"
        if self.own_model is not None:
            return self.own_model.config.name
        return str(self.params.get("model") or (job_model.name if job_model is not None else "unknown"))

    def build(self) -> Player:
        """A fresh player."""
        player = self.spec.build(self.params, config_key=self.key)
        if type(player) not in _PLAYER_CLASSES:  # a runtime protocol check is slow: once per class
            if not isinstance(player, Player):
                raise ConfigError(self.key, f"agent {self.name!r} is not a trust-game player")
            _PLAYER_CLASSES.add(type(player))
        return player


_PLAYER_CLASSES: set[type] = set()
"""Player classes already checked against the :class:`Player` protocol."""


def _role(entry: Any, role: Role, main: AgentSpec, main_params: Mapping[str, Any]) -> RoleSpec:
    key = f"game.{role}"
    if entry is None:
        return RoleSpec(role, main.name, main, dict(main_params), "agent")
    if isinstance(entry, str):
        name, given = entry, {}
    elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
        name, given = entry["name"], {k: v for k, v in entry.items() if k != "name"}
    else:
        raise ConfigError(key, f"expected null, an agent name or a mapping with 'name', got {entry!r}")
    spec = agent_spec(GAME, name, key)
    own = None
    if spec.uses_llm and is_model_ref(given.get("model")):
        own = resolve_model(given.pop("model"), f"{key}.model")  # its own client: model, api_base, key
    return RoleSpec(role, name, spec, check_section(given, spec.params, key), key, own)


def is_model_ref(value: Any) -> bool:
    """A role's ``model`` that names its own client: a preset name (no ``/``) or a model config mapping.
    A litellm id (``openai/x``) keeps the older meaning: that model through the job's client."""
    return isinstance(value, Mapping) or (isinstance(value, str) and "/" not in value)


def role_specs(
    options: TrustGameOptions, main: AgentSpec, main_params: Mapping[str, Any]
) -> dict[Role, RoleSpec]:
    """Both roles' agents from the ``game`` group's ``trustor``/``trustee`` entries (or the main agent).

    Args:
        options: The typed ``game`` group (:class:`games.trust_game.options.TrustGameOptions`).
        main: The ``agent`` group's agent.
        main_params: Its validated parameters.
    """
    return {role: _role(getattr(options, role), role, main, main_params) for role in ROLES}


def pin_role_models(options: TrustGameOptions, roles: Mapping[Role, RoleSpec]) -> TrustGameOptions:
    """The options with each role's resolved own model config written into its entry, so the manifest and
    the config hash record the model config the role really used, not just a preset name."""
    pinned: dict[str, Any] = {}
    for role, spec in roles.items():
        entry = getattr(options, role)
        if spec.own_model is not None and isinstance(entry, Mapping):
            pinned[role] = {**entry, "model": spec.own_model.values}
    return replace(options, **pinned) if pinned else options
