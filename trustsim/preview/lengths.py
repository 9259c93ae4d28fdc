"""Expected answer lengths: the preview's central estimate of a request's completion tokens.

Between the stand-in's shortest valid answer and the request's bound (the longest answer its schema allows,
else its token cap) lies what a model is expected to write:

1. **Observed**: the median completion tokens of the answers already in the request store for the same model
   (litellm id) and purpose, when there are at least :data:`MIN_OBSERVED`. Providers count hidden reasoning
   tokens as completion tokens, so the median includes them. A pilot (e.g. ``game.games=1``) puts answers
   into the store; the next preview uses them.
2. **Prior** otherwise: a reasoned answer of about :data:`REASONED_ANSWER_TOKENS` visible tokens, the median
   of the reference study's 7,452 decision texts (six models; 64–319 per model; litellm's token counter for
   gpt-4o); the study's logs hold no other text, so every purpose gets this prior, except those a game
   declares short (:attr:`trustsim.contract.GameSpec.short_answers`, e.g. a number): as short as the
   stand-in's answer. A model that reasons (litellm's ``supports_reasoning``) also spends hidden tokens
   that no prior knows: such requests are counted and the preview says so.

The central estimate is never above the request's bound, and a prior never below the stand-in's answer.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from trustsim.llm.transport import get_litellm

MIN_OBSERVED = 5
"""Stored answers of a model and purpose needed before their median replaces the prior."""
REASONED_ANSWER_TOKENS = 177
"""Median visible tokens of the reference study's decision texts (the prior of a reasoned answer)."""


@dataclass(frozen=True, slots=True)
class Central:
    """One request's expected completion tokens and where the figure comes from."""

    tokens: int
    basis: str  # observed | prior
    unmeasured_reasoning: bool  # a prior for a model that reasons: hidden tokens not counted


class AnswerLengths:
    """Expected completion tokens per request, from a store's answers (``lengths(model, purpose)``) or the
    priors (``short``: purposes whose answers are as short as the stand-in's); one store query per model and
    purpose."""

    def __init__(self, store: Any, short: frozenset[str] = frozenset()) -> None:
        self._store = store
        self._short = short
        self._observed: dict[tuple[str, str], int | None] = {}
        self._reasons: dict[str, bool] = {}

    def observed(self, model: str, purpose: str) -> int | None:
        """The median completion tokens of the stored answers (None: fewer than :data:`MIN_OBSERVED`)."""
        key = (model, purpose)
        if key not in self._observed:
            lengths = self._store.answer_lengths(model, purpose) if self._store is not None else []
            self._observed[key] = round(statistics.median(lengths)) if len(lengths) >= MIN_OBSERVED else None
        return self._observed[key]

    def reasons(self, model: str) -> bool:
        """Whether litellm's map says the model reasons (spends hidden completion tokens)."""
        if model not in self._reasons:
            try:
                self._reasons[model] = bool(get_litellm().supports_reasoning(model=model))
            except Exception:  # a model outside litellm's map: nothing known
                self._reasons[model] = False
        return self._reasons[model]

    def central(self, model: str, purpose: str, shortest: int, bound: int) -> Central:
        """The expected completion tokens of one request (``shortest``: the stand-in's answer; ``bound``: the
        longest its schema allows, else its cap)."""
        seen = self.observed(model, purpose)
        if seen is not None:
            return Central(
                min(seen, bound), "observed", False
            )  # real answers may be shorter than the stand-in
        prior = shortest if purpose in self._short else REASONED_ANSWER_TOKENS
        tokens = _clip(prior, shortest, bound)
        return Central(tokens, "prior", tokens < bound and self.reasons(model))


def _clip(tokens: int, low: int, high: int) -> int:
    return max(low, min(high, tokens)) if high >= low else low
