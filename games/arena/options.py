"""Arena options from the resolved config, validated with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from games.arena.policy import ArenaPlayer
from games.arena.rules import Horizon, InvalidRule, Payoffs
from trustsim.contract import AgentSpec, agent_spec, agents_for
from trustsim.errors import ConfigError
from trustsim.llm.seat_model import resolve_model
from trustsim.schema import check_section, opt
from trustsim.validate import get_bool, get_choice, get_float, get_int

GAME = "arena"


@dataclass(frozen=True)
class ArenaGame:
    """Schema of the ``game`` group (``conf/game/arena.yaml``)."""

    mode: Literal["match", "tournament"] = "match"
    opponent: str | dict[str, Any] = "ipd_tit_for_tat"  # match mode: agent name or {name: ..., param: value}
    # (an LLM player's `model`: a conf/model preset or a model config mapping = its own client)
    players: list[Any] = field(
        default_factory=list
    )  # tournament: agent names / mappings; [] = every scripted player
    self_play: bool = False
    rounds: int = opt(20, min=1)
    horizon: Literal["announced", "unknown"] = "announced"
    continuation: float = opt(0.95, min=0.0, max=0.999999)
    reward: float = 3.0
    punishment: float = 1.0
    sucker: float = 0.0
    temptation: float = 5.0
    noise: float = opt(0.0, min=0.0, max=1.0)
    opponent_identity: Literal["named", "anonymous"] = "named"
    invalid_move: Literal["repeat", "cooperate", "defect"] = "repeat"


@dataclass(frozen=True)
class PlayerSpec:
    """A player to instantiate: the registered agent and its validated constructor parameters."""

    name: str
    agent: AgentSpec
    params: dict[str, Any] = field(default_factory=dict)
    key: str = "agent"  # config key to blame on a bad spec
    model: dict[str, Any] | None = None  # the player's own model config (own client); None: the job's

    @property
    def model_name(self) -> str | None:
        """The model of an LLM player: its own config's name, its ``model`` parameter, else None (the job's)."""
        if self.model is not None:
            return str(self.model["name"])
        return self.params.get("model")

    def build(self) -> ArenaPlayer:
        """A fresh player instance."""
        try:
            player = self.agent.build(self.params)
        except (TypeError, ValueError) as exc:
            raise ConfigError(self.key, f"bad parameters for agent {self.name!r}: {exc}") from None
        if not isinstance(player, ArenaPlayer):
            raise ConfigError(self.key, f"agent {self.name!r} is not an arena player")
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


def _spec(entry: Any, key: str, params: dict[str, Any] | None = None) -> PlayerSpec:
    if isinstance(entry, str):
        name, raw = entry, {}
    elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
        name, raw = entry["name"], {k: v for k, v in entry.items() if k != "name"}
    else:
        raise ConfigError(key, f"expected an agent name or a mapping with 'name', got {entry!r}")
    agent = agent_spec(GAME, name, key)
    own = None
    if params is None and agent.uses_llm and is_model_ref(raw.get("model")):
        own = resolve_model(raw.pop("model"), f"{key}.model")  # its own client: model, api_base, key
    values = params if params is not None else check_section(raw, agent.params, key)
    return PlayerSpec(name, agent, values, key, own)


def is_model_ref(value: Any) -> bool:
    """A player's ``model`` that names its own client: a preset name (no ``/``) or a model config mapping.
    A litellm id (``openai/x``) keeps the older meaning: that model through the job's client."""
    return isinstance(value, dict) or (isinstance(value, str) and "/" not in value)


def _scripted_field() -> list[PlayerSpec]:
    return [PlayerSpec(n, a, {}, "game.players") for n, a in agents_for(GAME).items() if not a.uses_llm]


def uses_llm(cfg: dict[str, Any], agent: AgentSpec) -> bool:
    """Whether any player of the job calls a model (the agent, the opponent or a tournament entrant)."""
    return any(spec.agent.uses_llm for spec in options_from_config(cfg).field_)


def _defaults(spec: PlayerSpec) -> dict[str, Any]:
    return check_section({}, spec.agent.params, spec.key)


def options_from_config(cfg: dict[str, Any]) -> ArenaOptions:
    """Validate ``cfg.game`` (and ``cfg.agent``) and build the options."""
    game = cfg["game"]
    p = "game."
    mode = get_choice(game, "mode", ["match", "tournament"], p)
    agent_cfg = dict(cfg.get("agent") or {})
    main = _spec(agent_cfg["name"], "agent", {k: v for k, v in agent_cfg.items() if k != "name"})
    if mode == "match":
        opponent = _spec(game.get("opponent"), "game.opponent")
        field_: list[PlayerSpec] = [main, opponent]
    else:
        players = game.get("players") or []
        if not isinstance(players, list):
            raise ConfigError("game.players", f"expected a list of agents, got {players!r}")
        field_ = [_spec(e, f"game.players[{i}]") for i, e in enumerate(players)] or _scripted_field()
        if main.name not in {s.name for s in field_} or main.params != _defaults(main):
            field_.insert(0, main)
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
