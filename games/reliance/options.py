"""The ``game`` config group of the reliance game, validated with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from trustsim.errors import ConfigError
from trustsim.schema import opt

SETS = ("main", "pairs", "support", "specialised", "fixtures", "all")


@dataclass(frozen=True)
class RelianceGame:
    """Schema of the ``game`` group (``conf/game/reliance.yaml``)."""

    set: Literal["main", "pairs", "support", "specialised", "fixtures", "all"] = "main"
    limit: int | None = opt(None, min=1)  # at most this many scenarios (pairs for set=pairs)
    categories: str | list[str] | None = None  # a list (or comma-separated string) of names; None = all
    processes: str | list[str] | None = None
    blueprints: str | list[str] | None = None
    scenarios: str | list[str] | None = None
    show_posterior: bool = False  # belief-support variant
    concurrency: int = opt(16, min=1)  # scenarios played at once by asynchronous agents (execution only)


@dataclass(frozen=True)
class RelianceOptions:
    """Validated game options."""

    set: str
    limit: int | None
    categories: tuple[str, ...] | None
    processes: tuple[str, ...] | None
    blueprints: tuple[str, ...] | None
    scenarios: tuple[str, ...] | None
    show_posterior: bool
    agent: str
    concurrency: int


def _str_list(game: dict[str, Any], key: str) -> tuple[str, ...] | None:
    value = game.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"game.{key}", f"expected a non-empty list of names (or null), got {value!r}")
    return tuple(value)


def options_from_config(cfg: dict[str, Any]) -> RelianceOptions:
    """Parse ``cfg['game']`` and ``cfg['agent']``."""
    game = cfg["game"]
    set_name = game.get("set", "main")
    if set_name not in SETS:
        raise ConfigError("game.set", f"unknown set {set_name!r}; expected one of {list(SETS)}")
    limit = game.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError("game.limit", f"expected a positive integer or null, got {limit!r}")
    show = game.get("show_posterior", False)
    if not isinstance(show, bool):
        raise ConfigError("game.show_posterior", f"expected true or false, got {show!r}")
    conc = game.get("concurrency", 16)
    if isinstance(conc, bool) or not isinstance(conc, int) or conc < 1:
        raise ConfigError("game.concurrency", f"expected a positive integer, got {conc!r}")
    agent = cfg["agent"]["name"]
    return RelianceOptions(
        set=set_name,
        limit=limit,
        categories=_str_list(game, "categories"),
        processes=_str_list(game, "processes"),
        blueprints=_str_list(game, "blueprints"),
        scenarios=_str_list(game, "scenarios"),
        show_posterior=show,
        agent=agent,
        concurrency=conc,
    )
