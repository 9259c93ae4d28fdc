"""A seat's or player's own model: a ``conf/model`` preset name, a full model config, or a preset plus changes.

Mixed teams give one seat (escape room), player (arena) or role (trust game) a model of its own, with its
own client (model, ``api_base``, ``api_key_env``) and hence its own request-store keys. The value is written
where the game reads it (``game.seats.B.model``, ``game.opponent.model``, ``game.trustee.model``) in one of
three forms:

- ``gpt-5.1``: the preset ``conf/model/gpt-5.1.yaml``;
- ``{name: b, litellm_model: openai/b, api_base: http://127.0.0.1:8001/v1, api_key_env: B_KEY}``: a full
  model config (the schema of the ``model`` group);
- ``{preset: gpt-5.4-mini, api_base: http://10.0.0.5:8000/v1}``: a preset with some keys replaced (a nested
  key such as ``params`` is replaced whole, not merged).

:func:`resolve_model` turns each form into the plain model config (validated like the ``model`` group, errors
naming the full key), so the run's manifest records what the seat really used, and the typed config its
client is built from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trustsim.config import conf_dir, conf_option
from trustsim.errors import ConfigError
from trustsim.llm.config import ModelConfig, parse_model_config
from trustsim.schema import did_you_mean


def model_presets() -> list[str]:
    """Names of the presets in ``conf/model/``."""
    return sorted(p.stem for p in (conf_dir() / "model").glob("*.yaml"))


@dataclass(frozen=True)
class OwnModel:
    """A seat's own model: the plain config the run records and the validated config its client uses."""

    values: dict[str, Any]
    config: ModelConfig


def load_preset(name: str, key: str) -> dict[str, Any]:
    """The values of ``conf/model/<name>.yaml``; an unknown name fails at ``key`` naming the closest preset."""
    presets = model_presets()
    if name not in presets:
        raise ConfigError(
            key,
            f"unknown model preset {name!r}{did_you_mean(name, presets)} "
            f"(presets: {', '.join(presets)}; or give a full model config as a mapping)",
        )
    return conf_option("model", name)


def resolve_model(value: Any, key: str) -> OwnModel | None:
    """A seat's ``model`` value resolved and validated (None stays None: the job's ``model`` group).

    Raises:
        ConfigError: an unknown preset, a bad key or value (naming ``key.<field>``), or a preset that is no
            language model (``scripted``).
    """
    if value is None:
        return None
    if isinstance(value, str):
        data = load_preset(value, key)
    elif isinstance(value, Mapping):
        data = dict(value)
        preset = data.pop("preset", None)
        if preset is not None:
            if not isinstance(preset, str):
                raise ConfigError(f"{key}.preset", f"expected a model preset name, got {preset!r}")
            data = {**load_preset(preset, f"{key}.preset"), **data}
    else:
        raise ConfigError(key, f"expected a model preset name or a model config mapping, got {value!r}")
    if "litellm_model" not in data:
        raise ConfigError(key, f"{data.get('name', value)!r} is not a language model (no litellm_model)")
    return OwnModel(data, parse_model_config(data, key))


def merge_stats(main: Any, seats: list[Any]) -> dict[str, Any] | None:
    """A job's LLM stats over its clients: the job's client alone gives its own stats unchanged; with seat
    clients, counts and cost are summed (other values, such as the process-wide ``local`` accounting, are
    taken once) and ``by_model`` gives each model's own (None: no client built)."""
    clients = [c for c in (main, *seats) if c is not None]
    if not clients:
        return None
    if not seats:
        return main.stats()
    per_model: dict[str, dict[str, Any]] = {}
    total: dict[str, Any] = {}
    for client in clients:
        stats = client.stats()
        name = str(getattr(getattr(client, "model", None), "name", "unknown"))
        mine = per_model.setdefault(name, {})
        for k, v in stats.items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                total[k] = total.get(k, 0) + v
                mine[k] = mine.get(k, 0) + v
            else:  # e.g. "local": process-wide embedded-model accounting, the same in every client
                total.setdefault(k, v)
                mine.setdefault(k, v)
    for bucket in (total, *per_model.values()):
        for k in ("cost_usd", "latency_s"):
            if k in bucket:
                bucket[k] = round(float(bucket[k]), 8 if k == "cost_usd" else 4)
    return {**total, "by_model": per_model}
