"""Mixed escape-room teams: each tested seat's own agent and model (``game.seats``), checked and planned.

``game.seats.<A|B|C>.agent`` (an agent name or ``{name: ..., <param>: ...}``) and ``game.seats.<seat>.model``
(a model preset name, a full model config or ``{preset: ..., <key>: ...}``) replace the ``agent`` / ``model``
group for one seat. At validation, :func:`normalise_seats` resolves every value to its plain form and drops
settings equal to the groups' (``game.seats.A.agent=bayes`` with ``agent=bayes`` changes nothing), and drops
``game.seats`` entirely when no seat differs, so a default team has exactly the config (hence run id and
tables) it had before teams existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from trustsim.contract import AgentSpec, agent_spec
from trustsim.errors import ConfigError
from trustsim.llm.seat_model import resolve_model
from trustsim.schema import check_section

GAME = "escape_room"
TEAM_SEATS = ("A", "B", "C")  # the tested seats; D is the scripted partner


@dataclass(frozen=True)
class SeatPlan:
    """Who plays one seat: the agent, its validated parameters and its own model config (None = ``model``)."""

    seat: str
    agent: AgentSpec
    params: dict[str, Any]
    model: dict[str, Any] | None
    own: bool  # the seat has its own agent or model (``game.seats``)

    @property
    def uses_llm(self) -> bool:
        return self.agent.uses_llm


def _plain(seats: Any) -> dict[str, dict[str, Any]]:
    if seats is None:
        return {}
    if is_dataclass(seats) and not isinstance(seats, type):
        seats = asdict(seats)
    if not isinstance(seats, Mapping):
        raise ConfigError("game.seats", f"expected a mapping of seats A, B, C, got {seats!r}")
    return {str(k): dict(v or {}) for k, v in seats.items()}


def _agent_entry(value: Any, main: AgentSpec, main_params: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A seat's agent as ``{name, **params}``; None when it is the ``agent`` group's own agent and params."""
    if value is None:
        return None
    if isinstance(value, str):
        name, given, explicit = value, {}, False
    elif isinstance(value, Mapping) and isinstance(value.get("name"), str):
        name, given, explicit = value["name"], {k: v for k, v in value.items() if k != "name"}, True
    else:
        raise ConfigError(key, f"expected null, an agent name or a mapping with 'name', got {value!r}")
    spec = agent_spec(GAME, name, key)
    if name == main.name and not explicit:
        return None  # the agent group's agent, with its parameters
    params = check_section(given, spec.params, key)
    if name == main.name and params == main_params:
        return None
    return {"name": name, **params}


def normalise_seats(cfg: dict[str, Any], main: AgentSpec) -> list[str]:
    """Resolve ``cfg['game']['seats']`` in place (plain mappings; seats equal to the groups dropped; the key
    removed when no seat differs). Returns warnings (a model on a seat whose agent calls none)."""
    game = cfg["game"]
    raw = _plain(game.get("seats"))
    main_params = {k: v for k, v in (cfg.get("agent") or {}).items() if k != "name"}
    job_model = cfg.get("model")
    warnings: list[str] = []
    out: dict[str, dict[str, Any]] = {}
    for seat in TEAM_SEATS:
        entry = raw.get(seat, {})
        key = f"game.seats.{seat}"
        agent = _agent_entry(entry.get("agent"), main, main_params, f"{key}.agent")
        spec = main if agent is None else agent_spec(GAME, agent["name"], f"{key}.agent")
        if agent is not None:
            _probe(spec, {k: v for k, v in agent.items() if k != "name"}, cfg, f"{key}.agent")
        model = resolve_model(entry.get("model"), f"{key}.model")
        if model is not None and not spec.uses_llm:
            warnings.append(
                f"'{key}.model' has no effect: seat {seat}'s agent {spec.name!r} makes no LLM calls"
            )
            model = None
        if model is not None and model == job_model:
            model = None
        if agent is not None or model is not None:
            out[seat] = {"agent": agent, "model": model}
    if out:
        game["seats"] = {s: out.get(s, {"agent": None, "model": None}) for s in TEAM_SEATS}
    else:
        game.pop("seats", None)
    return warnings


def _probe(spec: AgentSpec, params: dict[str, Any], cfg: dict[str, Any], key: str) -> None:
    """Build the seat's agent once, so bad parameters fail at start naming the seat's key."""
    memory = (cfg.get("memory") or {}).get("mode", "transcript")
    spec.build(params, memory=memory, config_key=key)


def seat_plans(cfg: dict[str, Any], main: AgentSpec, main_params: dict[str, Any]) -> dict[str, SeatPlan]:
    """Every tested seat's plan from a validated (normalised) config."""
    seats = _plain(cfg["game"].get("seats"))
    plans = {}
    for seat in TEAM_SEATS:
        entry = seats.get(seat, {})
        agent, model = entry.get("agent"), entry.get("model")
        if agent is None:
            spec, params = main, dict(main_params)
        else:
            spec = agent_spec(GAME, agent["name"], f"game.seats.{seat}.agent")
            params = {k: v for k, v in agent.items() if k != "name"}
        plans[seat] = SeatPlan(seat, spec, params, model, agent is not None or model is not None)
    return plans


def team_uses_llm(cfg: dict[str, Any], main: AgentSpec) -> bool:
    """Whether any tested seat calls a model."""
    if not cfg["game"].get("seats"):
        return main.uses_llm
    return any(p.uses_llm for p in seat_plans(cfg, main, {}).values())


def seat_model_name(plan: SeatPlan, cfg: dict[str, Any]) -> str:
    """The model a seat plays with: its own, else the ``model`` group's; ``scripted`` for scripted agents."""
    if not plan.uses_llm:
        return "scripted"
    model = plan.model or cfg.get("model") or {}
    return str(model.get("name") or model.get("litellm_model") or "unknown")


def seat_prompt(plan: SeatPlan, cfg: dict[str, Any]) -> str | None:
    """An LLM seat's prompt style: its model's pinned ``prompt``, else its agent's ``prompt``."""
    if not plan.uses_llm:
        return None
    model = plan.model or cfg.get("model") or {}
    return model.get("prompt") or plan.params.get("prompt")


def team_label(plans: Mapping[str, SeatPlan], cfg: dict[str, Any]) -> str:
    """The team composition (a cell key): ``A=llm:gpt-5.1;B=llm:gpt-5.1;C=bayes``; empty for the default team
    (every seat plays the ``agent`` / ``model`` groups), so such runs pool with runs from before teams."""
    if not any(p.own for p in plans.values()):
        return ""
    parts = []
    for seat, plan in plans.items():
        who = plan.agent.name
        if plan.uses_llm:
            who += f":{seat_model_name(plan, cfg)}"
        parts.append(f"{seat}={who}")
    return ";".join(parts)
