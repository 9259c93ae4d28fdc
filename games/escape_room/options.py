"""Validated escape-room options (from the resolved config), with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.escape_room.schedules import resolve_schedule
from games.escape_room.types import SEATS
from trustsim.errors import ConfigError
from trustsim.validate import get_bool, get_choice, get_int, get_str

MEMORY_MODES = ("none", "transcript", "reflection", "ledger")
PARTNER_SEAT = "D"


@dataclass(frozen=True, slots=True)
class EscapeRoomOptions:
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
    agent_target: str
    partner_target: str
    seats: tuple[str, ...] = SEATS


def options_from_config(cfg: dict[str, Any]) -> EscapeRoomOptions:
    game = cfg["game"]
    schedule = cfg.get("schedule") or {}
    if not isinstance(schedule, dict):
        raise ConfigError("schedule", "missing schedule group; choose one, e.g. schedule=smooth")
    memory = cfg.get("memory") or {}
    name = get_str(schedule, "name", "schedule.")
    d_correct, games = resolve_schedule(
        name, schedule.get("pattern"), get_int(game, "games", "game.", minimum=1, optional=True)
    )
    coins = get_int(game, "coins", "game.", minimum=0)
    max_rounds = get_int(game, "max_rounds", "game.", minimum=1, optional=True) or len(SEATS)
    agents = game.get("agents") or {}
    agent = get_str(cfg["agent"], "name", "agent.")
    if agent not in agents:
        raise ConfigError(
            "agent",
            f"agent {agent!r} is not available for game 'escape_room' (available: {', '.join(sorted(agents))})",
        )
    return EscapeRoomOptions(
        games=games,
        d_correct=tuple(d_correct),
        schedule=name,
        memory=get_choice(memory, "mode", MEMORY_MODES, "memory."),
        coins=coins,  # type: ignore[arg-type]
        max_rounds=max_rounds,
        partner_slot=get_choice(game, "partner_slot", ("fixed", "random"), "game."),
        reveal_after_game=get_bool(game, "reveal_after_game", "game."),
        own_answer=get_choice(game, "own_answer", ("exact", "llm"), "game."),
        verifier=get_choice(game, "verifier", ("exact", "llm"), "game."),
        agent=agent,
        agent_target=agents[agent],
        partner_target=get_str(game, "partner", "game."),
    )
