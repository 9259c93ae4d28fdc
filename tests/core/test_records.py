"""fast_init: a frozen, slotted dataclass built through its slots is the same object, faster; what it cannot
build the same way is refused."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from trustsim.records import fast_init


@dataclasses.dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str
    c: tuple[int, ...] = ()
    d: dict[int, str] | None = None


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Fast:
    a: int
    b: str
    c: tuple[int, ...] = ()
    d: dict[int, str] | None = None


def test_a_fast_record_equals_the_dataclass_built_one_in_every_respect():
    for args, kwargs in [((1, "x"), {}), ((1, "x", (2,)), {}), ((), {"a": 1, "b": "x", "d": {1: "y"}})]:
        plain, fast = Plain(*args, **kwargs), Fast(*args, **kwargs)
        assert dataclasses.astuple(plain) == dataclasses.astuple(fast)
        assert repr(fast) == repr(plain).replace("Plain", "Fast")
        assert pickle.loads(pickle.dumps(fast)) == fast
    assert Fast(1, "x") == Fast(a=1, b="x") and hash(Fast(1, "x")) == hash(Fast(1, "x", ()))
    assert dataclasses.replace(Fast(1, "x"), b="y") == Fast(1, "y")
    assert list(inspect.signature(Fast).parameters) == ["a", "b", "c", "d"]
    assert inspect.signature(Fast).parameters["c"].default == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fast(1, "x").a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fast(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast(1, "x", e=3)  # type: ignore[call-arg]


def test_what_fast_init_cannot_build_alike_is_refused():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = dataclasses.field(kw_only=True)

    for cls in (NoSlots, NotFrozen, Factory, PostInit, KeywordOnly):
        with pytest.raises(TypeError):
            fast_init(cls)
