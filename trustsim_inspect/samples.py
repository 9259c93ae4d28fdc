"""From a trustsim configuration to Inspect samples: one sample = one unit of play = one trustsim job.

A task composes trustsim's configuration once (``+experiment=...`` and overrides, through Hydra) and splits
it into units of play, each the configuration of one trustsim job with ``runs=1``:

- escape room: a session (a sequence of games with the same players); ``runs`` sessions have seeds
  ``seed, seed+1, ...``;
- reliance: a scenario (a pair of controlled histories for ``game.set=pairs``), selected by
  ``game.scenarios``; ``runs`` replicates have seeds ``seed, seed+1, ...``;
- arena: a match (``game.mode=match``) or a round-robin tournament (``tournament``: its matches are one
  unit, as the tournament's ranking reads them together); seeds ``seed, seed+1, ...``;
- trust game: a pair (``game.pairs=1``); ``runs`` × ``pairs`` pairs have seeds ``seed, seed+1, ...``.

A sample's job is exactly ``python -m trustsim <its overrides>``; its metadata carries them and the cell.
Epoch ``e`` (1-based) of a sample plays the seed ``seed + (e-1) × units`` (another world of the same cell),
so epochs add sessions rather than repeat one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.reliance.items import select_items
from games.reliance.library import default_library
from trustsim.api import compose
from trustsim.config import validate_config
from trustsim.contract import game_options
from trustsim_inspect.bridge import MAIN, model_id

DEFAULT_PRESET = "openai_compatible"
"""The trustsim model preset whose decoding settings (params per purpose, structured output, prompt style)
an Inspect seat uses unless ``model_preset`` names another (Inspect's own options fill what it leaves out)."""

ROLES: dict[str, dict[str, tuple[str, ...]]] = {
    "escape_room": {"seat_a": ("seats", "A"), "seat_b": ("seats", "B"), "seat_c": ("seats", "C")},
    "arena": {"opponent": ("opponent",)},
    "trust_game": {"trustor": ("trustor",), "trustee": ("trustee",)},
    "reliance": {},
}
"""Per game: the Inspect model roles it reads (``--model-role <role>=<model>``) and where in the ``game``
group the seat's model goes. An unbound role plays the eval's model (``--model``) through the job's own
client, exactly as in a trustsim run without a mixed team."""


@dataclass(frozen=True)
class SampleJob:
    """One sample: its id, the trustsim job it runs, the overrides that rerun it, and its cell."""

    id: str
    family: str
    config: dict[str, Any]  # the composed, resolved trustsim configuration of the job (runs=1)
    overrides: tuple[str, ...]  # python -m trustsim <overrides> runs the same job (model aside)
    cell: dict[str, Any] = field(default_factory=dict)
    units: int = 1  # units of play in the task's cell: the seed stride of one epoch

    def for_epoch(self, epoch: int) -> SampleJob:
        """The job of epoch ``epoch`` (1-based): the same cell, seed moved by ``(epoch-1) × units``."""
        if epoch <= 1:
            return self
        shift = (epoch - 1) * self.units
        seed = int(self.config["seed"]) + shift
        config = {**self.config, "seed": seed}
        overrides = (*(o for o in self.overrides if override_key(o) != "seed"), f"seed={seed}")
        return SampleJob(self.id, self.family, config, overrides, {**self.cell, "seed": seed}, self.units)

    def with_models(self, main: str, roles: Mapping[str, str]) -> dict[str, Any]:
        """The job's configuration with its models: ``main`` (the eval model's name) plays every LLM seat,
        each bound role in ``roles`` (role → model name) its own seat."""
        cfg = copy.deepcopy(self.config)
        cfg["model"] = inspect_model(cfg["model"], main, None)
        game = cfg["game"]
        for role, name in roles.items():
            where = ROLES.get(self.family, {}).get(role)
            if where is None:
                continue
            own = inspect_model(cfg["model"], name, role)
            if where[0] == "seats":
                seats = game.setdefault("seats", {})
                seats[where[1]] = {**(seats.get(where[1]) or {}), "model": own}
            else:
                entry = game.get(where[0])
                entry = dict(entry) if isinstance(entry, Mapping) else {}
                game[where[0]] = {**entry, "name": "llm", "model": own}
        return cfg


def inspect_model(preset: Mapping[str, Any], name: str, role: str | None) -> dict[str, Any]:
    """A model config that sends its calls to Inspect: the preset's decoding settings, named ``name``."""
    model = copy.deepcopy(dict(preset))
    model.update(
        name=name,
        litellm_model=model_id(role),
        provider="litellm",
        api_base=None,
        api_key_env=None,
        headers_env={},
        price=None,
    )
    return model


def as_list(value: str | Sequence[str] | None) -> list[str]:
    """A task parameter given as one string (comma-separated) or a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def compose_base(experiment: str | None, overrides: Sequence[str], preset: str) -> dict[str, Any]:
    """The composed trustsim configuration of a task (validated, with Inspect's model in place)."""
    cfg = compose(experiment, [f"model={preset}", "progress=false", *overrides])
    cfg["model"] = inspect_model(cfg["model"], MAIN, None)
    validate_config(cfg, list(overrides))
    return cfg


def _job(
    family: str,
    base: dict[str, Any],
    base_overrides: Sequence[str],
    sample_id: str,
    changes: dict[str, Any],
    cell: dict[str, Any],
    units: int,
) -> SampleJob:
    cfg = copy.deepcopy(base)
    overrides = [o for o in base_overrides if override_key(o) not in changes]
    for path, value in changes.items():
        node = cfg
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
        overrides.append(f"{path}={_override_value(value)}")
    return SampleJob(sample_id, family, cfg, tuple(overrides), cell, units)


def override_key(text: str) -> str:
    """The key an override sets (``+card/part=x`` -> ``card/part``, ``seed=3`` -> ``seed``)."""
    return text.split("=", 1)[0].lstrip("+~")


def _override_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def plan_samples(cfg: dict[str, Any], overrides: Sequence[str], prefix: str = "") -> list[SampleJob]:
    """The samples of one composed configuration (its family's units of play × ``runs``)."""
    family = str(cfg["game"]["type"])
    seed, runs = int(cfg.get("seed") or 0), int(cfg.get("runs") or 1)
    card = cfg.get("card") or {}
    common = {"family": family, "experiment": cfg.get("name"), "agent": (cfg.get("agent") or {}).get("name")}
    if card.get("part"):
        common.update(part=card["part"], size=card.get("size"))
    if family == "reliance":
        return _reliance(cfg, overrides, prefix, seed, runs, common)
    game = cfg["game"]
    if family == "escape_room":
        schedule, memory = cfg.get("schedule") or {}, cfg.get("memory") or {}
        pattern = str(schedule.get("pattern") or "")
        cell = {**common, "schedule": schedule.get("name"), "memory": memory.get("mode"),
                "partner_slot": game.get("partner_slot"), "games": game.get("games") or len(pattern)}  # fmt: skip
        units: list[dict[str, Any]] = [{}] * runs
        what = "session"
    elif family == "arena":
        cell = {
            **common,
            "mode": game.get("mode"),
            "rounds": game.get("rounds"),
            "opponent": _name(game.get("opponent")),
        }
        units, what = [{}] * runs, "match" if game.get("mode") == "match" else "tournament"
    elif family == "trust_game":
        cell = {**common, "trustor": _name(game.get("trustor")), "trustee": _name(game.get("trustee")),
                "rounds": game.get("rounds")}  # fmt: skip
        units, what = [{"game.pairs": 1}] * (runs * int(game.get("pairs") or 1)), "pair"
    else:
        raise ValueError(f"game {family!r} has no Inspect task (its unit of play is not known here)")
    out = []
    for k, changes in enumerate(units):
        s = seed + k
        sample_id = f"{prefix}{cfg.get('name') or family}-{what}-seed{s}"
        out.append(_job(family, cfg, overrides, sample_id, {"seed": s, "runs": 1, **changes},
                        {**cell, "unit": what, "seed": s}, len(units)))  # fmt: skip
    return out


def _reliance(
    cfg: dict[str, Any], overrides: Sequence[str], prefix: str, seed: int, runs: int, common: dict[str, Any]
) -> list[SampleJob]:
    lib = default_library()
    items = select_items(lib, game_options(cfg))
    units: dict[str, Any] = {}
    for item in items:  # a pair's two sides are one unit (game.scenarios selects the pair)
        units.setdefault(item.pair.id if item.pair is not None else item.id, item)
    out = []
    for r in range(runs):
        s = seed + r
        for unit, item in units.items():
            scn = item.scenario
            cell = {**common, "set": item.set, "scenario": scn.id, "blueprint": scn.blueprint,
                    "category": scn.category, "process": scn.process, "unit": "pair" if item.pair else "scenario",
                    "item": unit, "seed": s}  # fmt: skip
            changes = {"seed": s, "runs": 1, "game.scenarios": [unit], "game.limit": None}
            out.append(_job("reliance", cfg, overrides, f"{prefix}{unit}-seed{s}", changes, cell, runs))
    return out


def _name(value: Any) -> Any:
    if isinstance(value, Mapping):
        return value.get("name")
    return value
