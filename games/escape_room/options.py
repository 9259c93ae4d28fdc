"""The escape room's config schemas (``game``, ``memory``, ``schedule`` groups) and its derived options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from games.escape_room.puzzles import check_session_size
from games.escape_room.schedules import SCHEDULES, parse_pattern, resolve_schedule
from games.escape_room.types import SEATS
from trustsim.errors import ConfigError
from trustsim.schema import opt

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


def run_name(groups: dict[str, Any]) -> str | None:
    """``custom-<pattern>`` (``T``/``F`` per game) for a job whose config sets no name and whose schedule is
    custom (``schedule=custom``, or a pattern that differs from the named schedule's); else None."""
    schedule = groups.get("schedule") or {}
    pattern = schedule.get("pattern")
    games = (groups.get("game") or {}).get("games")
    games = games if isinstance(games, int) and not isinstance(games, bool) else None
    if pattern is None or schedule_label(str(schedule.get("name")), pattern, games) != "custom":
        return None
    return "custom-" + "".join("T" if ok else "F" for ok in parse_pattern(pattern))


def check(cfg: dict[str, Any], agent: Any) -> list[str]:
    """Cross-field rules: the schedule covers the games; LLM-only settings need an LLM agent; a pattern
    that differs from the named schedule is labelled ``custom`` (in the config, hence everywhere)."""
    game, schedule = cfg["game"], cfg["schedule"]
    if schedule.get("pattern") is None and schedule["name"] not in SCHEDULES:
        raise ConfigError(
            "schedule.pattern", f"schedule.pattern is required for schedule {schedule['name']!r}"
        )
    _, n_games = resolve_schedule(schedule["name"], schedule.get("pattern"), game.get("games"))
    check_session_size(n_games, len(SEATS))  # puzzles never repeat within a session
    from games.escape_room.team import normalise_seats

    warnings = normalise_seats(cfg, agent)
    _check_prompt_styles(cfg)
    resolve_solvers(cfg, agent)
    for key in ("verifier", "own_answer"):
        if game.get(key) == "llm" and not uses_llm(cfg, agent):
            raise ConfigError(
                f"game.{key}",
                f"'llm' needs an agent that calls a model; agent {agent.name!r} makes no LLM calls "
                f"(use agent=llm or an LLM seat, or game.{key}=exact)",
            )
    label = schedule_label(schedule["name"], schedule.get("pattern"), game.get("games"))
    if label != schedule["name"]:
        cfg["schedule"] = {**schedule, "name": label}
        warnings.append(
            f"schedule.pattern differs from schedule {schedule['name']!r}: the cell is labelled 'custom'"
        )
    return warnings


SOLVER_KEYS = ("own_answer", "verifier")
"""Who solves a puzzle privately: a seat's own puzzle (sealed in its capsule) and a verification."""


def resolve_solvers(cfg: dict[str, Any], agent: Any) -> None:
    """Resolve ``game.own_answer`` / ``game.verifier`` ``auto`` in place (the study presets set it): ``llm``,
    as the study asked, when a tested seat calls a model and none of those seats' models is flagged
    ``weak`` (the embedded SmolLM2-135M: its answers would mostly be wrong, where the study's models' own
    answers were right, and each answer is a slow call); ``exact`` otherwise (scripted agents solve exactly
    anyway). The record, hence the manifest, tables and run id, holds the resolved value."""
    game = cfg["game"]
    if not any(game.get(key) == "auto" for key in SOLVER_KEYS):
        return
    models = llm_seat_models(cfg, agent)
    value = "llm" if models and not any(m.get("weak") for m in models) else "exact"
    for key in SOLVER_KEYS:
        if game.get(key) == "auto":
            game[key] = value


def llm_seat_models(cfg: dict[str, Any], agent: Any) -> list[dict[str, Any]]:
    """The model config of every tested seat that calls a model (its own, else the ``model`` group's)."""
    from games.escape_room.team import seat_plans

    main_params = {k: v for k, v in (cfg.get("agent") or {}).items() if k != "name"}
    job_model = cfg.get("model") if isinstance(cfg.get("model"), dict) else {}
    return [p.model or job_model for p in seat_plans(cfg, agent, main_params).values() if p.uses_llm]


def _check_prompt_styles(cfg: dict[str, Any]) -> None:
    """A model config that pins a prompt style (``model.prompt``, a seat's model's) names one of ours."""
    seats = cfg["game"].get("seats") or {}
    models = {
        "model": cfg.get("model"),
        **{f"game.seats.{s}.model": e.get("model") for s, e in seats.items()},
    }
    for key, model in models.items():
        prompt = model.get("prompt") if isinstance(model, dict) else None
        if prompt is not None and prompt not in PROMPT_STYLES:
            raise ConfigError(
                f"{key}.prompt", f"expected one of {', '.join(PROMPT_STYLES)} or null; got {prompt!r}"
            )


def uses_llm(cfg: dict[str, Any], agent: Any) -> bool:
    """Whether any seat calls a model: the ``agent`` group's agent, or a seat's own agent (``game.seats``)."""
    from games.escape_room.team import team_uses_llm

    return team_uses_llm(cfg, agent)


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
