"""What a plan would cost: each job priced through the engine's preview.

Design exception (as ``analysis conformance`` imports the escape room's rules): ``analysis`` reads files and
imports no engine code, but a price needs the engine's preview, which plays a job with a stand-in model under
the real LLM client and counts its tokens (nothing is sent, no key is read). The imports happen only here
and only when ``--model`` is given.

Each distinct job (its overrides) is previewed for one session (``runs=1``) and scaled by the sessions
planned: escape-room, reliance, arena and trust-game sessions are replicates of the same structure. The
request store is not subtracted (a plan's sessions are priced as new requests); previewing the plan's
multirun (``python -m trustsim -m +plan=plan.csv preview=true``) counts stored answers as free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SCALED = (
    "requests_low", "requests", "prompt_tokens_low", "prompt_tokens", "completion_tokens_low",
    "completion_tokens", "completion_tokens_high", "cost_low", "cost_estimate", "cost_high",
)  # fmt: skip
"""Figures of a one-session preview that scale with sessions (upper figures unless ``_low``)."""


class PricingError(ValueError):
    """A job cannot be priced (its configuration is invalid or its model unknown); the message says which."""


@dataclass(frozen=True)
class SessionPrice:
    """One session of a job, as the preview counts it."""

    figures: dict[str, float | None]
    prices: tuple[str, ...]
    notes: tuple[str, ...]
    uses_llm: bool

    def times(self, sessions: int | None) -> dict[str, float | None]:
        """The figures for ``sessions`` sessions (None/NaN when the plan has no number)."""
        if sessions is None:
            return dict.fromkeys(SCALED, math.nan)
        return {k: (None if v is None else v * sessions) for k, v in self.figures.items()}


class Pricer:
    """Prices jobs by their overrides, previewing each distinct job once."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, ...], SessionPrice] = {}

    def session(self, overrides: Sequence[str]) -> SessionPrice:
        """One session of the job ``overrides`` (``runs=1``)."""
        key = tuple(overrides)
        if key not in self._cache:
            self._cache[key] = _preview_one(key)
        return self._cache[key]


def _preview_one(overrides: tuple[str, ...]) -> SessionPrice:
    from trustsim.api import compose  # design exception: see the module docstring
    from trustsim.errors import ConfigError
    from trustsim.preview import estimate

    job = [*overrides, "runs=1", "progress=false"]
    try:
        cfg = compose(None, job)
        est = estimate(cfg)
    except ConfigError as exc:
        raise PricingError(f"cannot price the job `{' '.join(overrides)}`: {exc}") from exc
    except Exception as exc:  # Hydra: an unknown preset or model config
        if type(exc).__module__.startswith("hydra") or type(exc).__name__ in ("MissingConfigException",):
            reason = " ".join(str(exc).split())[:300]
            raise PricingError(f"cannot price the job `{' '.join(overrides)}`: {reason}") from exc
        raise
    data: dict[str, Any] = est.to_dict()
    figures = {k: (None if data.get(k) is None else float(data[k])) for k in SCALED}
    return SessionPrice(figures, tuple(est.prices), tuple(est.notes), bool(est.requests))
