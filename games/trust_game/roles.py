"""Who plays each role: ``game.trustor`` / ``game.trustee`` (null = the ``agent`` group), validated by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.trust_game.types import ROLES, Player, Role
from trustsim.contract import AgentSpec, agent_spec
from trustsim.errors import ConfigError
from trustsim.llm.seat_model import resolve_model
from trustsim.schema import check_section

GAME = "trust_game"


@dataclass(frozen=True)
class RoleSpec:
    """The agent of one role: its registered spec, validated parameters and the config key to blame."""

    role: Role
    name: str
    spec: AgentSpec
    params: dict[str, Any]
    key: str
    own_model: dict[str, Any] | None = None  # the role's own model config (own client); None: the job's

    @property
    def uses_llm(self) -> bool:
        return self.spec.uses_llm

    def model(self, cfg: Mapping[str, Any]) -> str:
        """The model behind the role: its own model config's name, the agent's ``model`` parameter, else the
        ``model`` group; or ``scripted``."""
        if not self.uses_llm:
            return "scripted"
        if self.own_model is not None:
            return str(self.own_model["name"])
        return str(self.params.get("model") or (cfg.get("model") or {}).get("name") or "unknown")

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


def role_specs(options: Any, main: AgentSpec, main_params: Mapping[str, Any]) -> dict[Role, RoleSpec]:
    """Both roles' agents from the ``game`` group's ``trustor``/``trustee`` entries (or the main agent).

    Args:
        options: The typed ``game`` group (:class:`games.trust_game.options.TrustGameOptions`).
        main: The ``agent`` group's agent.
        main_params: Its validated parameters.
    """
    return {role: _role(getattr(options, role), role, main, main_params) for role in ROLES}


def main_agent(cfg: Mapping[str, Any]) -> tuple[AgentSpec, dict[str, Any]]:
    """The ``agent`` group's spec and validated parameters (for checks that run before the job context)."""
    agent = dict(cfg.get("agent") or {})
    name = agent.pop("name", None)
    if not isinstance(name, str):
        raise ConfigError("agent.name", "missing")
    spec = agent_spec(GAME, name)
    return spec, check_section(agent, spec.params, "agent")


def pin_role_models(game: dict[str, Any], roles: Mapping[Role, RoleSpec]) -> None:
    """Write each role's resolved own model config into the ``game`` group (in place), so the manifest and
    the config hash record the model config the role really used, not just a preset name."""
    for role, spec in roles.items():
        entry = game.get(role)
        if spec.own_model is not None and isinstance(entry, Mapping):
            game[role] = {**entry, "model": spec.own_model}
