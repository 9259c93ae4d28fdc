"""The ``game`` config group of the reliance game, validated with errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trustsim.errors import ConfigError
from trustsim.schema import opt

FilterKey = Literal["categories", "processes", "blueprints", "scenarios"]
FILTERS: tuple[FilterKey, ...] = ("categories", "processes", "blueprints", "scenarios")


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
    # scenarios played at once by asynchronous agents; the library is code and feedback draws depend on the
    # root seed only, so no option here is a world key
    concurrency: int = opt(16, min=1, execution=True)

    def names(self, key: FilterKey) -> tuple[str, ...] | None:
        """A selection filter's names (a comma-separated string split); None: no filter."""
        value = getattr(self, key)
        if value is None:
            return None
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return tuple(value)

    def check(self, key: str) -> None:
        """Every filter given names at least one name."""
        for name in FILTERS:
            if self.names(name) == ():
                raise ConfigError(
                    f"{key}.{name}",
                    f"expected a non-empty list of names (or null), got {getattr(self, name)!r}",
                )
