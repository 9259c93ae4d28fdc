"""The escape room's config schemas (``game``, ``memory``, ``schedule`` groups) and its derived options."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from games.escape_room.puzzles import check_session_size
from games.escape_room.schedules import SCHEDULES, parse_pattern, resolve_schedule
from games.escape_room.types import SEATS
from trustsim.errors import ConfigError
from trustsim.llm.config import ModelConfig
from trustsim.schema import opt

if TYPE_CHECKING:
    from trustsim.config import Draft

PARTNER_SEAT = "D"
PROMPT_STYLES = ("reference", "trustsim")
"""How LLM agents are prompted (``agent.prompt``; a model config may pin one: ``model.prompt``)."""


@dataclass(frozen=True)
class SeatOptions:
    """One seat's own agent and model (``game.seats.B``); null = the ``agent`` / ``model`` group.

    ``agent``: an agent name or ``{name: ..., <param>: ...}``; ``model``: a ``conf/model`` preset name, a full
    model config, or ``{preset: ..., <key>: ...}`` (see :mod:`trustsim.llm.seat_model`).
    """

    agent: str | dict[str, Any] | None = None
    model: str | dict[str, Any] | None = None


@dataclass(frozen=True)
class TeamSeats:
    """The ``game.seats`` mapping: the three tested seats (the partner D is scripted)."""

    A: SeatOptions = field(default_factory=SeatOptions)
    B: SeatOptions = field(default_factory=SeatOptions)
    C: SeatOptions = field(default_factory=SeatOptions)


@dataclass(frozen=True)
class EscapeRoomGame:
    """Schema of the ``game`` group (``conf/game/escape_room.yaml``)."""

    games: int | None = opt(None, min=1, world=True)  # games per session; None = the schedule's length
    coins: int = opt(4, min=0, world=True)  # coins per seat at the start of every game
    max_rounds: int | None = opt(None, min=1, world=True)  # None = number of seats
    partner_slot: Literal["fixed", "random"] = opt("fixed", world=True)
    reveal_after_game: bool = opt(False, world=True)
    # exact | llm (the seat's model solves, as the study) | auto (llm where a model can: resolve_solvers)
    own_answer: Literal["exact", "llm", "auto"] = "exact"
    verifier: Literal["exact", "llm", "auto"] = "exact"
    own_verify: Literal["charge", "illegal"] = opt("charge", world=True)
    capsule_names: Literal["lenient", "exact"] = opt("lenient", world=True)
    malformed_volunteer: Literal["pass", "die"] = opt("pass", world=True)
    announce_passes: bool = False  # list passes in LLM agents' announcements (the reference never did)
    seats: TeamSeats = field(default_factory=TeamSeats)  # mixed teams: a seat's own agent / model


@dataclass(frozen=True)
class MemoryOptions:
    """Schema of the ``memory`` group: what crosses games."""

    mode: Literal["none", "transcript", "reflection", "transcript_reflection", "ledger"] = "transcript"


@dataclass(frozen=True)
class ScheduleOptions:
    """Schema of the ``schedule`` group: the partner's failure schedule (T correct / F wrong per game)."""

    name: str = "smooth"
    pattern: str | list[Any] | None = opt(None, world=True)


@dataclass(frozen=True, slots=True)
class EscapeRoomOptions:
    """Everything a session needs, derived from the validated config."""

    games: int
    d_correct: tuple[bool, ...]
    schedule: str
    memory: str
    coins: int
    max_rounds: int
    partner_slot: str  # fixed | random
    reveal_after_game: bool
    own_answer: str  # exact | llm
    verifier: str  # exact | llm
    agent: str
    seats: tuple[str, ...] = SEATS
    own_verify: str = "charge"  # charge | illegal
    capsule_names: str = "lenient"  # lenient | exact
    malformed_volunteer: str = "pass"  # pass | die


def schedule_label(name: str, pattern: Any, games: int | None) -> str:
    """``name``, or ``custom`` when the pattern differs from the named schedule's (over the games played)."""
    if name not in SCHEDULES or pattern is None:
        return name
    flags = parse_pattern(pattern)
    named = parse_pattern(SCHEDULES[name])
    n = games if games is not None else len(flags)
    if games is None and len(flags) != len(named):
        return "custom"
    return name if flags[:n] == named[:n] else "custom"


def run_name(game: EscapeRoomGame, groups: dict[str, Any]) -> str | None:
    """``custom-<pattern>`` (``T``/``F`` per game) for a job whose config sets no name and whose schedule is
    custom (``schedule=custom``, or a pattern that differs from the named schedule's); else None."""
    schedule: ScheduleOptions = groups["schedule"]
    if schedule.pattern is None or schedule_label(schedule.name, schedule.pattern, game.games) != "custom":
        return None
    return "custom-" + "".join("T" if ok else "F" for ok in parse_pattern(schedule.pattern))


def check(draft: Draft) -> list[str]:
    """Cross-field rules: the schedule covers the games; LLM-only settings need an LLM agent; a pattern
    that differs from the named schedule is labelled ``custom`` (in the config, hence everywhere)."""
    game: EscapeRoomGame = draft.options
    schedule: ScheduleOptions = draft.groups["schedule"]
    if schedule.pattern is None and schedule.name not in SCHEDULES:
        raise ConfigError("schedule.pattern", f"schedule.pattern is required for schedule {schedule.name!r}")
    _, n_games = resolve_schedule(schedule.name, schedule.pattern, game.games)
    check_session_size(n_games, len(SEATS))  # puzzles never repeat within a session
    from games.escape_room.team import normalise_seats

    warnings = normalise_seats(draft)
    _check_prompt_styles(draft)
    resolve_solvers(draft)
    game = draft.options
    for key in SOLVER_KEYS:
        if getattr(game, key) == "llm" and not uses_llm(draft):
            raise ConfigError(
                f"game.{key}",
                f"'llm' needs an agent that calls a model; agent {draft.agent.name!r} makes no LLM calls "
                f"(use agent=llm or an LLM seat, or game.{key}=exact)",
            )
    label = schedule_label(schedule.name, schedule.pattern, game.games)
    if label != schedule.name:
        draft.groups["schedule"] = replace(schedule, name=label)
        warnings.append(
            f"schedule.pattern differs from schedule {schedule.name!r}: the cell is labelled 'custom'"
        )
    return warnings


SOLVER_KEYS = ("own_answer", "verifier")
"""Who solves a puzzle privately: a seat's own puzzle (sealed in its capsule) and a verification."""


def resolve_solvers(draft: Draft) -> None:
    """Resolve ``game.own_answer`` / ``game.verifier`` ``auto`` (the study presets set it): ``llm``, as the
    study asked, when a tested seat calls a model and none of those seats' models is flagged ``weak`` (the
    embedded SmolLM2-135M: its answers would mostly be wrong, where the study's models' own answers were
    right, and each answer is a slow call); ``exact`` otherwise (scripted agents solve exactly anyway). The
    record, hence the manifest, tables and run id, holds the resolved value."""
    game: EscapeRoomGame = draft.options
    auto = [key for key in SOLVER_KEYS if getattr(game, key) == "auto"]
    if not auto:
        return
    models = llm_seat_models(draft)
    value = "llm" if models and not any(m.weak for m in models) else "exact"
    resolved: dict[str, Any] = dict.fromkeys(auto, value)
    draft.options = replace(game, **resolved)


def llm_seat_models(draft: Draft) -> list[ModelConfig]:
    """The model config of every tested seat that calls a model (its own, else the ``model`` group's)."""
    from games.escape_room.team import seat_model, seat_plans

    plans = seat_plans(draft.options, draft.agent, draft.agent_params).values()
    return [m for m in (seat_model(p, draft.model) for p in plans) if m is not None]


def _check_prompt_styles(draft: Draft) -> None:
    """A model config that pins a prompt style (``model.prompt``, a seat's model's) names one of ours."""
    from games.escape_room.team import seat_plans

    plans = seat_plans(draft.options, draft.agent, draft.agent_params)
    models = {
        "model": draft.model,
        **{f"game.seats.{s}.model": p.model for s, p in plans.items()},
    }
    for key, model in models.items():
        prompt = model.prompt if model is not None else None
        if prompt is not None and prompt not in PROMPT_STYLES:
            raise ConfigError(
                f"{key}.prompt", f"expected one of {', '.join(PROMPT_STYLES)} or null; got {prompt!r}"
            )


def uses_llm(draft: Draft) -> bool:
    """Whether any seat calls a model: the ``agent`` group's agent, or a seat's own agent (``game.seats``)."""
    from games.escape_room.team import team_uses_llm

    return team_uses_llm(draft.options, draft.agent)


def session_options(
    game: EscapeRoomGame, schedule: ScheduleOptions, memory: MemoryOptions, agent: str
) -> EscapeRoomOptions:
    """What every session of a job plays, from the validated groups (the schedule resolved to its games)."""
    d_correct, games = resolve_schedule(schedule.name, schedule.pattern, game.games)
    return EscapeRoomOptions(
        games=games,
        d_correct=tuple(d_correct),
        schedule=schedule.name,
        memory=memory.mode,
        coins=game.coins,
        max_rounds=game.max_rounds or len(SEATS),
        partner_slot=game.partner_slot,
        reveal_after_game=game.reveal_after_game,
        own_answer=game.own_answer,
        verifier=game.verifier,
        agent=agent,
        own_verify=game.own_verify,
        capsule_names=game.capsule_names,
        malformed_volunteer=game.malformed_volunteer,
    )
