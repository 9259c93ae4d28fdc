"""The one validator: every config group is a dataclass schema, validated into a typed object.

Field types: ``int``, ``float``, ``bool``, ``str``, ``X | None``, ``Literal[...]`` (choices),
``list[...]``/``tuple[...]``, ``dict``/``dict[str, X]``, ``Any`` and nested dataclasses. Ranges and roles go in
the field's metadata with :func:`opt`: ``min``/``max``, ``world`` (the value defines the game's world: it
enters the world hash, hence every world random stream) and ``execution`` (how a job runs, not what it
computes: left out of the config hash). A schema may define ``check(self, key)``: cross-field rules, run on
the validated object, raising :class:`~trustsim.errors.ConfigError` naming the key.

Every error names the full key: ``config error at 'game.coins': must be >= 0 (got -1)``; an unknown key names
the closest valid one (:func:`did_you_mean`, the one place such hints are worded).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

from trustsim.errors import ConfigError

CHECK_HOOK = "check"
"""Name of a schema's optional cross-field hook: ``def check(self, key: str) -> None``."""


def opt(
    default: Any = dataclasses.MISSING,
    *,
    min: float | None = None,
    max: float | None = None,
    world: bool = False,
    execution: bool = False,
) -> Any:
    """A schema field with a default, an optional range and its role: ``coins: int = opt(4, min=0, world=True)``.

    Args:
        default: The default value (a list, dict or set is copied for every instance).
        min: Smallest accepted number.
        max: Largest accepted number.
        world: The value defines the world (it enters the world hash; see :func:`world_fields`).
        execution: The value changes how a job runs, not what it computes (left out of the config hash).
    """
    if world and execution:
        raise ValueError("a field cannot be both a world key and an execution setting")
    meta = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
    meta.update({k: True for k, v in (("world", world), ("execution", execution)) if v})
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=functools.partial(type(default), default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name closest to ``name`` (None when nothing is close)."""
    matches = difflib.get_close_matches(str(name), list(valid), n=1, cutoff=0.5)
    return matches[0] if matches else None


def did_you_mean(name: str, valid: Iterable[str], shown: Callable[[str], str] = repr) -> str:
    """``"; did you mean 'x'?"`` naming the valid name closest to ``name``, or ``""`` when none is close.

    ``shown`` words the suggestion (default: quoted), e.g. ``lambda h: f"'game.{h}'"`` or
    ``lambda h: f"agent={h}"``."""
    hint = closest(name, valid)
    return f"; did you mean {shown(hint)}?" if hint is not None else ""


def unknown_key(key: str, name: str, valid: Iterable[str]) -> ConfigError:
    """The uniform error for an unknown key: names the key and the closest valid one."""
    valid = sorted(valid)
    suggestion = did_you_mean(name, valid, lambda hint: f"'{key}{hint}'")
    return ConfigError(f"{key}{name}", f"unknown key{suggestion} (valid keys: {', '.join(valid) or 'none'})")


def plain_mapping(value: object, key: str) -> dict[str, Any]:
    """A plain mapping (e.g. ``OmegaConf.to_container`` of a config node) with string keys; a ConfigError at
    ``key`` when ``value`` is no mapping."""
    if not isinstance(value, dict):
        raise ConfigError(key or "config", f"expected a mapping, got {value!r}")
    return {str(k): v for k, v in value.items()}


def fields_with(schema: type, role: str) -> Iterator[str]:
    """Names of the schema's fields marked with ``role`` (``world`` or ``execution``) in :func:`opt`."""
    return (f.name for f in dataclasses.fields(schema) if f.metadata.get(role))


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is Literal:
        return "one of " + ", ".join(map(_fmt, typing.get_args(hint)))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string", type(None): "null"}
    if hint in names:
        return names[hint]
    if origin in (list, tuple) or hint in (list, tuple):
        return "a list"
    if origin is dict or hint is dict:
        return "a mapping"
    return getattr(hint, "__name__", str(hint))


def _fmt(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _check(value: Any, hint: Any, key: str) -> Any:
    """Return the value (converted where lossless) or raise a ConfigError naming ``key``."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _check(value, arg, key)
            except ConfigError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise ConfigError(key, f"expected {_describe(hint)}, got {value!r}")
    if origin is Literal:
        choices = typing.get_args(hint)
        if value in choices and not (
            isinstance(value, bool) and True not in choices and False not in choices
        ):
            return value
        raise ConfigError(key, f"expected one of {', '.join(map(_fmt, choices))}; got {value!r}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(key, f"expected true or false, got {value!r}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(key, f"expected an integer, got {value!r}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(key, f"expected a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(key, f"expected a string, got {value!r}")
    if origin in (list, tuple) or hint in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(key, f"expected a list, got {value!r}")
        args = typing.get_args(hint)
        item = args[0] if args else Any
        return [_check(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(key, f"expected a mapping, got {value!r}")
        args = typing.get_args(hint)
        if len(args) != 2 or args[1] is Any:
            return value
        return {k: _check(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ConfigError(key, f"expected a mapping, got {value!r}")
        return build(hint, value, key)
    if isinstance(hint, type) and isinstance(value, hint):
        return value
    raise ConfigError(key, f"expected {_describe(hint)}, got {value!r}")


def build(schema: type, data: Mapping[str, Any], key: str) -> Any:
    """Validate ``data`` against the dataclass ``schema`` and return the instance (built once), defaults filled
    in and nested dataclass fields as instances; the schema's ``check(self, key)`` hook (if any) runs on it.

    Args:
        data: The group's values (a plain mapping).
        schema: A dataclass.
        key: The group's config path (``game``, ``agent``, ``game.opponent``); errors name ``key.field``.
    """
    prefix = f"{key}." if key else ""
    if not isinstance(data, Mapping):
        raise ConfigError(key or "config", f"expected a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(schema)}
    for name in data:
        if name not in fields:
            raise unknown_key(prefix, name, fields)
    hints = typing.get_type_hints(schema, include_extras=False)
    out: dict[str, Any] = {}
    for name, f in fields.items():
        sub = f"{prefix}{name}"
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(sub, "missing required value")
            continue
        value = _check(data[name], hints[name], sub)
        if isinstance(value, int | float) and not isinstance(value, bool):
            lo, hi = f.metadata.get("min"), f.metadata.get("max")
            if lo is not None and value < lo:
                raise ConfigError(sub, f"must be >= {lo} (got {value})")
            if hi is not None and value > hi:
                raise ConfigError(sub, f"must be <= {hi} (got {value})")
        out[name] = value
    instance = schema(**out)
    hook = getattr(instance, CHECK_HOOK, None)
    if hook is not None:
        hook(key)
    return instance


def values_of(instance: Any) -> dict[str, Any]:
    """A validated instance's field values by name, in field order (nested dataclasses stay instances)."""
    return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)}


def check_section(data: Mapping[str, Any], schema: type, key: str) -> dict[str, Any]:
    """Validate ``data`` against the dataclass ``schema`` (:func:`build`); return its values with defaults
    filled in (:func:`values_of`)."""
    return values_of(build(schema, data, key))


def instantiate(schema: type, values: Mapping[str, Any]) -> Any:
    """An instance of ``schema`` from values that were validated (:func:`check_section`), possibly normalised
    since: nothing is checked again; a nested dataclass field given as a mapping is instantiated too, and a
    field left out takes its default."""
    hints = typing.get_type_hints(schema, include_extras=False)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.name not in values:
            continue
        value = values[f.name]
        nested = _dataclass_of(hints[f.name])
        if nested is not None and isinstance(value, Mapping):
            value = instantiate(nested, value)
        kwargs[f.name] = value
    return schema(**kwargs)


def _dataclass_of(hint: Any) -> type | None:
    """The dataclass a field holds (also inside ``X | None``), else None."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        found = [a for a in typing.get_args(hint) if isinstance(a, type) and dataclasses.is_dataclass(a)]
        return found[0] if len(found) == 1 else None
    return None
