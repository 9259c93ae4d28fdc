"""Arena options from the resolved config, validated with errors that name the key."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from hydra.utils import get_class

from agents.arena.base import ArenaPlayer
from games.arena.rules import Horizon, InvalidRule, Payoffs
from trustsim.errors import ConfigError
from trustsim.validate import get_bool, get_choice, get_float, get_int

SHARED_AGENTS = ("llm", "random")
"""Agent names shared across games: their config may carry other games' keys, so only the parameters the
arena class accepts are passed (a game-specific ``ipd_*`` agent gets all its parameters, strictly)."""


@dataclass(frozen=True)
class PlayerSpec:
    """A player to instantiate: agent name, class path and constructor parameters."""

    name: str
    target: str
    params: dict[str, Any] = field(default_factory=dict)
    key: str = "agent"  # config key to blame on a bad spec

    def build(self) -> ArenaPlayer:
        """A fresh player instance."""
        try:
            cls = get_class(self.target)
        except Exception as exc:
            raise ConfigError(
                self.key, f"cannot load {self.target!r} for agent {self.name!r}: {exc}"
            ) from None
        params = dict(self.params)
        if self.name in SHARED_AGENTS:
            accepted = inspect.signature(cls.__init__).parameters
            params = {k: v for k, v in params.items() if k in accepted}
        try:
            player = cls(**params)
        except (TypeError, ValueError) as exc:
            raise ConfigError(self.key, f"bad parameters for agent {self.name!r}: {exc}") from None
        if not isinstance(player, ArenaPlayer):
            raise ConfigError(self.key, f"{self.target} is not an arena player")
        return player


@dataclass(frozen=True)
class ArenaOptions:
    """Everything a job needs to set up its matches."""

    mode: str
    field_: tuple[PlayerSpec, ...]  # match: (agent, opponent); tournament: every entrant
    payoffs: Payoffs
    horizon: Horizon
    noise: float
    named: bool
    invalid_rule: InvalidRule
    self_play: bool

    @property
    def identity(self) -> str:
        return "named" if self.named else "anonymous"

    def pairings(self) -> list[tuple[int, int]]:
        """Seat-A/seat-B index pairs into ``field_``: one match, or the round robin (i <= j with self-play)."""
        if self.mode == "match":
            return [(0, 1)]
        n = len(self.field_)
        return [(i, j) for i in range(n) for j in range(i, n) if i != j or self.self_play]


def _spec(entry: Any, agents: dict[str, str], key: str) -> PlayerSpec:
    if isinstance(entry, str):
        name, params = entry, {}
    elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
        name, params = entry["name"], {k: v for k, v in entry.items() if k != "name"}
    else:
        raise ConfigError(key, f"expected an agent name or a mapping with 'name', got {entry!r}")
    if name not in agents:
        raise ConfigError(
            key, f"agent {name!r} is not available in game 'arena' (available: {', '.join(sorted(agents))})"
        )
    return PlayerSpec(name, agents[name], params, key)


def _scripted_field(agents: dict[str, str]) -> list[PlayerSpec]:
    return [PlayerSpec(n, t, {}, "game.players") for n, t in sorted(agents.items()) if n != "llm"]


def options_from_config(cfg: dict[str, Any]) -> ArenaOptions:
    """Validate ``cfg.game`` (and ``cfg.agent``) and build the options."""
    game = cfg["game"]
    p = "game."
    agents = game.get("agents")
    if not isinstance(agents, dict) or not agents:
        raise ConfigError("game.agents", "expected a mapping of agent name to class path")
    mode = get_choice(game, "mode", ["match", "tournament"], p)
    agent_cfg = cfg.get("agent") or {}
    agent_spec = _spec(dict(agent_cfg), agents, "agent")
    if mode == "match":
        opponent = _spec(game.get("opponent"), agents, "game.opponent")
        field_: list[PlayerSpec] = [agent_spec, opponent]
    else:
        players = game.get("players") or []
        if not isinstance(players, list):
            raise ConfigError("game.players", f"expected a list of agents, got {players!r}")
        field_ = [_spec(e, agents, f"game.players[{i}]") for i, e in enumerate(players)] or _scripted_field(
            agents
        )
        if agent_spec.name not in {s.name for s in field_} or agent_spec.params:
            field_.insert(0, agent_spec)
        if len(field_) < 2 and not game.get("self_play"):
            raise ConfigError("game.players", "a tournament needs at least 2 players (or self_play: true)")
    try:
        payoffs = Payoffs(
            R=get_float(game, "reward", p),
            P=get_float(game, "punishment", p),
            S=get_float(game, "sucker", p),
            T=get_float(game, "temptation", p),
        )
    except ValueError as exc:
        raise ConfigError("game.temptation", str(exc)) from None
    horizon = Horizon(
        get_choice(game, "horizon", ["announced", "unknown"], p),
        get_int(game, "rounds", p, minimum=1),
        get_float(game, "continuation", p, minimum=0.0, maximum=0.999999),
    )
    return ArenaOptions(
        mode=mode,
        field_=tuple(field_),
        payoffs=payoffs,
        horizon=horizon,
        noise=get_float(game, "noise", p, minimum=0.0, maximum=1.0),
        named=get_choice(game, "opponent_identity", ["named", "anonymous"], p) == "named",
        invalid_rule=get_choice(game, "invalid_move", ["repeat", "cooperate", "defect"], p),  # type: ignore[arg-type]
        self_play=get_bool(game, "self_play", p),
    )
