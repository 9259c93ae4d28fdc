"""Arena options from the resolved config, validated with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from games.arena.policy import ArenaPlayer
from games.arena.rules import InvalidRule, Payoffs
from trustsim.contract import AgentSpec, agent_spec, agents_for
from trustsim.errors import ConfigError
from trustsim.horizon import Horizon
from trustsim.llm.config import ModelConfig
from trustsim.llm.seat_model import OwnModel, resolve_model
from trustsim.schema import check_section, opt

if TYPE_CHECKING:
    from trustsim.config import Draft

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
    rounds: int = opt(20, min=1, world=True)
    horizon: Literal["announced", "unknown"] = opt("announced", world=True)
    continuation: float = opt(0.95, min=0.0, max=0.999999, world=True)
    reward: float = opt(3.0, world=True)
    punishment: float = opt(1.0, world=True)
    sucker: float = opt(0.0, world=True)
    temptation: float = opt(5.0, world=True)
    noise: float = opt(0.0, min=0.0, max=1.0, world=True)
    opponent_identity: Literal["named", "anonymous"] = "named"
    invalid_move: Literal["repeat", "cooperate", "defect"] = "repeat"


@dataclass(frozen=True)
class PlayerSpec:
    """A player to instantiate: the registered agent and its validated constructor parameters."""

    name: str
    agent: AgentSpec
    params: dict[str, Any] = field(default_factory=dict)
    key: str = "agent"  # config key to blame on a bad spec
    model: OwnModel | None = None  # the player's own model config (own client); None: the job's

    @property
    def own_config(self) -> ModelConfig | None:
        """The player's own model config (None: the job's)."""
        return self.model.config if self.model is not None else None

    @property
    def model_name(self) -> str | None:
        """The model of an LLM player: its own config's name, its ``model`` parameter, else None (the job's)."""
        if self.model is not None:
            return self.model.config.name
        return self.params.get("model")

    def build(self) -> ArenaPlayer:
        """A fresh player instance."""
        player = self.agent.build(self.params, config_key=self.key)
        if not isinstance(player, ArenaPlayer):
            raise ConfigError(self.key, f"agent {self.name!r} is not an arena player")
        return player


@dataclass(frozen=True)
class ArenaOptions:
    """Everything a job needs to set up its matches."""

    mode: str
    entrants: tuple[PlayerSpec, ...]  # match: (agent, opponent); tournament: every entrant
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
        """Seat-A/seat-B index pairs into ``entrants``: one match, or the round robin (i <= j with self-play)."""
        if self.mode == "match":
            return [(0, 1)]
        n = len(self.entrants)
        return [(i, j) for i in range(n) for j in range(i, n) if i != j or self.self_play]


def _spec(entry: Any, key: str) -> PlayerSpec:
    if isinstance(entry, str):
        name, raw = entry, {}
    elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
        name, raw = entry["name"], {k: v for k, v in entry.items() if k != "name"}
    else:
        raise ConfigError(key, f"expected an agent name or a mapping with 'name', got {entry!r}")
    agent = agent_spec(GAME, name, key)
    own = None
    if agent.uses_llm and is_model_ref(raw.get("model")):
        own = resolve_model(raw.pop("model"), f"{key}.model")  # its own client: model, api_base, key
    return PlayerSpec(name, agent, check_section(raw, agent.params, key), key, own)


def is_model_ref(value: Any) -> bool:
    """A player's ``model`` that names its own client: a preset name (no ``/``) or a model config mapping.
    A litellm id (``openai/x``) keeps the older meaning: that model through the job's client."""
    return isinstance(value, dict) or (isinstance(value, str) and "/" not in value)


def _scripted_entrants() -> list[PlayerSpec]:
    return [PlayerSpec(n, a, {}, "game.players") for n, a in agents_for(GAME).items() if not a.uses_llm]


def uses_llm(draft: Draft) -> bool:
    """Whether any player of the job calls a model (the agent, the opponent or a tournament entrant)."""
    options = arena_options(draft.options, draft.agent, draft.agent_params)
    return any(spec.agent.uses_llm for spec in options.entrants)


def _defaults(spec: PlayerSpec) -> dict[str, Any]:
    return check_section({}, spec.agent.params, spec.key)


def arena_options(game: ArenaGame, agent: AgentSpec, params: dict[str, Any]) -> ArenaOptions:
    """The job's field, payoffs and horizon from the validated ``game`` group and the ``agent`` group's agent."""
    main = PlayerSpec(agent.name, agent, dict(params), "agent")
    if game.mode == "match":
        entrants: list[PlayerSpec] = [main, _spec(game.opponent, "game.opponent")]
    else:
        entrants = [
            _spec(e, f"game.players[{i}]") for i, e in enumerate(game.players)
        ] or _scripted_entrants()
        if main.name not in {s.name for s in entrants} or main.params != _defaults(main):
            entrants.insert(0, main)
        if len(entrants) < 2 and not game.self_play:
            raise ConfigError("game.players", "a tournament needs at least 2 players (or self_play: true)")
    try:
        payoffs = Payoffs(R=game.reward, P=game.punishment, S=game.sucker, T=game.temptation)
    except ValueError as exc:
        raise ConfigError("game.temptation", str(exc)) from None
    return ArenaOptions(
        mode=game.mode,
        entrants=tuple(entrants),
        payoffs=payoffs,
        # announced: exactly `rounds`; unknown: drawn with P(next round) = continuation, capped at `rounds`
        horizon=Horizon(
            game.rounds, game.continuation, known=game.horizon == "announced", max_rounds=game.rounds
        ),
        noise=game.noise,
        named=game.opponent_identity == "named",
        invalid_rule=game.invalid_move,
        self_play=game.self_play,
    )


def pin_player_models(game: ArenaGame) -> ArenaGame:
    """The ``game`` group with each player's resolved own model config written into its entry, so the
    manifest and the config hash record the model config the player really used, not just a preset name."""
    opponent, players = game.opponent, list(game.players)
    if isinstance(opponent, dict) and is_model_ref(opponent.get("model")):
        own = resolve_model(opponent["model"], "game.opponent.model")
        opponent = {**opponent, "model": own.values if own is not None else None}
    for i, entry in enumerate(players):
        if isinstance(entry, dict) and is_model_ref(entry.get("model")):
            own = resolve_model(entry["model"], f"game.players[{i}].model")
            players[i] = {**entry, "model": own.values if own is not None else None}
    return replace(game, opponent=opponent, players=players)
