"""Mixed escape-room teams: each tested seat's own agent and model (``game.seats``), checked and planned.

``game.seats.<A|B|C>.agent`` (an agent name or ``{name: ..., <param>: ...}``) and ``game.seats.<seat>.model``
(a model preset name, a full model config or ``{preset: ..., <key>: ...}``) replace the ``agent`` / ``model``
group for one seat. At validation, :func:`normalise_seats` resolves every value to its plain form and drops
settings equal to the groups' (``game.seats.A.agent=bayes`` with ``agent=bayes`` changes nothing); with no
seat differing, the record leaves ``game.seats`` out, so a default team has exactly the config (hence run id
and tables) it had before teams existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from games.escape_room.options import EscapeRoomGame, SeatOptions, TeamSeats
from trustsim.contract import AgentSpec, agent_spec
from trustsim.errors import ConfigError
from trustsim.llm.config import ModelConfig
from trustsim.llm.seat_model import resolve_model
from trustsim.schema import check_section

if TYPE_CHECKING:
    from trustsim.config import Draft

GAME = "escape_room"
TEAM_SEATS = ("A", "B", "C")  # the tested seats; D is the scripted partner


@dataclass(frozen=True)
class SeatPlan:
    """Who plays one seat: the agent, its validated parameters and its own model config (None = ``model``)."""

    seat: str
    agent: AgentSpec
    params: dict[str, Any]
    model: ModelConfig | None
    own: bool  # the seat has its own agent or model (``game.seats``)

    @property
    def uses_llm(self) -> bool:
        return self.agent.uses_llm


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


def normalise_seats(draft: Draft) -> list[str]:
    """Resolve ``game.seats`` (``draft.options``): each value in its plain form, settings equal to the groups'
    dropped (no seat differing: the default, which the record leaves out). Returns warnings (a model on a
    seat whose agent calls none)."""
    game: EscapeRoomGame = draft.options
    main, main_params = draft.agent, draft.agent_params
    memory = draft.groups["memory"].mode
    warnings: list[str] = []
    out: dict[str, SeatOptions] = {}
    for seat in TEAM_SEATS:
        entry: SeatOptions = getattr(game.seats, seat)
        key = f"game.seats.{seat}"
        agent = _agent_entry(entry.agent, main, main_params, f"{key}.agent")
        spec = main if agent is None else agent_spec(GAME, agent["name"], f"{key}.agent")
        if agent is not None:  # built once, so bad parameters fail at start naming the seat's key
            params = {k: v for k, v in agent.items() if k != "name"}
            spec.build(params, memory=memory, config_key=f"{key}.agent")
        model = resolve_model(entry.model, f"{key}.model")
        if model is not None and not spec.uses_llm:
            warnings.append(
                f"'{key}.model' has no effect: seat {seat}'s agent {spec.name!r} makes no LLM calls"
            )
            model = None
        if model is not None and model.config == draft.model:
            model = None
        out[seat] = SeatOptions(agent=agent, model=model.values if model is not None else None)
    draft.options = replace(game, seats=TeamSeats(**out))
    return warnings


def seat_plans(game: EscapeRoomGame, main: AgentSpec, main_params: dict[str, Any]) -> dict[str, SeatPlan]:
    """Every tested seat's plan from the ``game`` group (its seats normalised, or as given: their agents)."""
    plans = {}
    for seat in TEAM_SEATS:
        entry: SeatOptions = getattr(game.seats, seat)
        key = f"game.seats.{seat}"
        if entry.agent is None:
            spec, params = main, dict(main_params)
        elif isinstance(entry.agent, str):
            spec, params = agent_spec(GAME, entry.agent, f"{key}.agent"), {}
        else:
            spec = agent_spec(GAME, str(entry.agent.get("name")), f"{key}.agent")
            params = {k: v for k, v in entry.agent.items() if k != "name"}
        model = resolve_model(entry.model, f"{key}.model")
        own = model.config if model is not None else None
        plans[seat] = SeatPlan(seat, spec, params, own, entry.agent is not None or own is not None)
    return plans


def team_uses_llm(game: EscapeRoomGame, main: AgentSpec) -> bool:
    """Whether any tested seat calls a model."""
    if game.seats == TeamSeats():
        return main.uses_llm
    return any(p.uses_llm for p in seat_plans(game, main, {}).values())


def seat_model(plan: SeatPlan, job_model: ModelConfig | None) -> ModelConfig | None:
    """The model config a seat plays with: its own, else the job's (None for a scripted seat)."""
    return (plan.model or job_model) if plan.uses_llm else None


def seat_model_name(plan: SeatPlan, job_model: ModelConfig | None) -> str:
    """The model a seat plays with: its own, else the ``model`` group's; ``scripted`` for scripted agents."""
    if not plan.uses_llm:
        return "scripted"
    model = seat_model(plan, job_model)
    return model.name if model is not None else "unknown"


def seat_prompt(plan: SeatPlan, job_model: ModelConfig | None) -> str | None:
    """An LLM seat's prompt style: its model's pinned ``prompt``, else its agent's ``prompt``."""
    if not plan.uses_llm:
        return None
    model = seat_model(plan, job_model)
    return (model.prompt if model is not None else None) or plan.params.get("prompt")


def team_label(plans: Mapping[str, SeatPlan], job_model: ModelConfig | None) -> str:
    """The team composition (a cell key): ``A=llm:gpt-5.1;B=llm:gpt-5.1;C=bayes``; empty for the default team
    (every seat plays the ``agent`` / ``model`` groups), so such runs pool with runs from before teams."""
    if not any(p.own for p in plans.values()):
        return ""
    parts = []
    for seat, plan in plans.items():
        who = plan.agent.name
        if plan.uses_llm:
            who += f":{seat_model_name(plan, job_model)}"
        parts.append(f"{seat}={who}")
    return ";".join(parts)
