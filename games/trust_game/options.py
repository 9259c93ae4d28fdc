"""Trust-game options: the schema of the ``game`` group (conf/game/trust_game.yaml; docs/trust_game.md)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from games.trust_game.rules import Stakes
from games.trust_game.types import HistoryMode
from trustsim.errors import ConfigError
from trustsim.horizon import Horizon
from trustsim.schema import opt


@dataclass(frozen=True)
class TrustGameOptions:
    """The ``game`` group of ``game=trust_game``.

    Attributes:
        pairs: independent trustor–trustee pairs per session.
        rounds: rounds per pair (1 = one-shot) with a known horizon.
        horizon: ``known`` (players are told ``rounds``) or ``unknown`` (continuation probability).
        continue_p: unknown horizon: P(another round follows), told to the players.
        max_rounds: unknown horizon: cap on the drawn number of rounds.
        history: what the trustor sees before deciding: ``none``, ``own`` (its past rounds with this
            partner), ``population`` (Berg's social history, from ``population_table``).
        population_table: CSV of an earlier population's exchanges (columns ``sent,returned``).
        endowment: E, the trustor's endowment.
        trustee_endowment: E_t, the trustee's endowment; null = E (as in Berg).
        multiplier: k.
        trustor: the agent playing the trustor: an agent name or a mapping with ``name`` and parameters;
            null = the ``agent`` group.
        trustee: likewise for the trustee.
    """

    pairs: int = opt(100, min=1, world=True)
    rounds: int = opt(1, min=1, world=True)
    horizon: Literal["known", "unknown"] = opt("known", world=True)
    continue_p: float = opt(0.9, min=0.0, max=0.999, world=True)
    max_rounds: int = opt(50, min=1, world=True)
    history: Literal["none", "own", "population"] = "own"
    population_table: str | None = None
    endowment: int = opt(10, min=1)
    trustee_endowment: int | None = opt(None, min=0)
    multiplier: int = opt(3, min=1)
    trustor: Any = None
    trustee: Any = None

    @property
    def stakes(self) -> Stakes:
        e_t = self.endowment if self.trustee_endowment is None else self.trustee_endowment
        return Stakes(self.endowment, e_t, self.multiplier)

    @property
    def horizon_spec(self) -> Horizon:
        return Horizon(
            self.rounds, self.continue_p, known=self.horizon == "known", max_rounds=self.max_rounds
        )

    @property
    def history_mode(self) -> HistoryMode:
        return self.history

    @property
    def variant(self) -> str:
        """``one_shot`` or ``repeated``."""
        return "repeated" if self.horizon_spec.repeated else "one_shot"

    def population(self) -> tuple[tuple[int, int, float], ...]:
        """The social-history rows shown with ``history=population`` (empty otherwise)."""
        if self.history != "population":
            return ()
        if not self.population_table:
            raise ConfigError(
                "game.population_table", "history=population needs a CSV with columns sent,returned"
            )
        return load_population(self.population_table, self.endowment, self.multiplier)


def load_population(path: str, endowment: int, multiplier: int) -> tuple[tuple[int, int, float], ...]:
    """Berg's social history from a CSV of earlier exchanges (columns ``sent``, ``returned``).

    Returns one (sent, count, mean returned) row per amount sent, ascending. A bad file fails naming
    ``game.population_table``.
    """
    key = "game.population_table"
    file = Path(path)
    if not file.is_file():
        raise ConfigError(key, f"no such file: {path}")
    by_sent: dict[int, list[int]] = {}
    with file.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"sent", "returned"} <= set(reader.fieldnames):
            raise ConfigError(key, f"{path}: needs columns sent,returned (has {reader.fieldnames})")
        for line, row in enumerate(reader, start=2):
            try:
                s, r = int(row["sent"]), int(row["returned"])
            except (TypeError, ValueError):
                raise ConfigError(key, f"{path}:{line}: sent and returned must be integers") from None
            if not 0 <= s <= endowment or not 0 <= r <= multiplier * s:
                raise ConfigError(
                    key,
                    f"{path}:{line}: need 0 <= sent <= {endowment} and 0 <= returned <= {multiplier} x sent",
                )
            by_sent.setdefault(s, []).append(r)
    if not by_sent:
        raise ConfigError(key, f"{path}: no rows")
    return tuple((s, len(rs), sum(rs) / len(rs)) for s, rs in sorted(by_sent.items()))
