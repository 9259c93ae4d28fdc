"""Top-level configuration checks and the hashes that identify a run and its world."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from trustsim.errors import ConfigError
from trustsim.seeding import stable_hash
from trustsim.validate import get_choice, get_int, get_str

# Keys that change how a run executes but not what it computes.
NON_SEMANTIC_KEYS = ("hydra", "llm", "progress")
# Keys that fix the world: puzzles, partner behaviour, feedback draws. Agents and models are excluded so that
# different models face the same worlds for the same seed (common random numbers).
WORLD_KEYS = ("seed", "game", "schedule")


def to_container(cfg: DictConfig) -> dict[str, Any]:
    try:
        return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    except Exception as exc:  # interpolation errors name the key in their message
        raise ConfigError(getattr(exc, "full_key", "?") or "?", str(exc).splitlines()[0]) from None


def validate_top(cfg: dict[str, Any]) -> None:
    """Check the keys every job has."""
    for group in ("game", "agent"):
        if not isinstance(cfg.get(group), dict):
            raise ConfigError(group, "missing config group; choose one, e.g. game=escape_room agent=bayes")
    get_str(cfg, "name")
    get_int(cfg, "seed", minimum=0)
    get_int(cfg, "runs", minimum=1)
    if "progress" in cfg:
        value = cfg["progress"]
        if value not in ("auto", True, False):
            get_choice(cfg, "progress", ["auto", "true", "false"])
    get_str(cfg["game"], "runner", "game.")
    get_str(cfg["agent"], "name", "agent.")


def config_hash(cfg: dict[str, Any]) -> str:
    return stable_hash({k: v for k, v in cfg.items() if k not in NON_SEMANTIC_KEYS})


def world_hash(cfg: dict[str, Any]) -> str:
    return stable_hash({k: cfg.get(k) for k in WORLD_KEYS})
