"""Small validators that fail with a ConfigError naming the full key."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trustsim.errors import ConfigError


def _value(section: Mapping[str, Any], key: str, prefix: str) -> Any:
    if key not in section:
        raise ConfigError(f"{prefix}{key}", "missing")
    return section[key]


def get_int(
    section: Mapping[str, Any],
    key: str,
    prefix: str = "",
    *,
    minimum: int | None = None,
    optional: bool = False,
) -> int | None:
    value = _value(section, key, prefix)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{prefix}{key}", f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{prefix}{key}", f"must be >= {minimum} (got {value})")
    return value


def get_float(
    section: Mapping[str, Any],
    key: str,
    prefix: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    optional: bool = False,
) -> float | None:
    value = _value(section, key, prefix)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{prefix}{key}", f"expected a number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{prefix}{key}", f"must be >= {minimum} (got {value})")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{prefix}{key}", f"must be <= {maximum} (got {value})")
    return float(value)


def get_bool(section: Mapping[str, Any], key: str, prefix: str = "") -> bool:
    value = _value(section, key, prefix)
    if not isinstance(value, bool):
        raise ConfigError(f"{prefix}{key}", f"expected true or false, got {value!r}")
    return value


def get_choice(section: Mapping[str, Any], key: str, choices: Iterable[str], prefix: str = "") -> str:
    value = _value(section, key, prefix)
    options = list(choices)
    if value not in options:
        raise ConfigError(f"{prefix}{key}", f"expected one of {', '.join(map(str, options))}; got {value!r}")
    return value
