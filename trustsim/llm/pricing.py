"""What a model's tokens cost: the model config's ``price``, else litellm's price map; local models are free.

``price_of(model)`` gives a :class:`Price` in USD per million tokens, or None when nothing is known (a
model newer than litellm's map, an OpenAI-compatible server without ``price``). The price map is litellm's
bundled copy (``LITELLM_LOCAL_MODEL_COST_MAP=True``): no network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trustsim.llm.config import ModelConfig
from trustsim.llm.transport import get_litellm

MTOK = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input (prompt) and output (completion) tokens, and per million prompt tokens read from
    and written to the provider's prompt cache (None: the input price); where the figures come from:
    ``config`` (``model.price``), ``litellm`` (its price map, under ``entry``) or ``local`` (free)."""

    input_per_mtok: float
    output_per_mtok: float
    source: str
    entry: str | None = None
    cache_read_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def cost(
        self,
        prompt_tokens: float,
        completion_tokens: float,
        cached_tokens: float = 0,
        cache_write_tokens: float = 0,
    ) -> float:
        """USD for these token counts (``cached_tokens`` and ``cache_write_tokens`` are part of
        ``prompt_tokens``)."""
        read = self.input_per_mtok if self.cache_read_per_mtok is None else self.cache_read_per_mtok
        write = self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok
        fresh = max(0.0, prompt_tokens - cached_tokens - cache_write_tokens)
        return (
            fresh * self.input_per_mtok
            + cached_tokens * read
            + cache_write_tokens * write
            + completion_tokens * self.output_per_mtok
        ) / MTOK


def price_of(model: ModelConfig) -> Price | None:
    """The model's price: ``model.price``; free for the embedded model (``provider: local``); litellm's
    price map for ``model.litellm_model``; None when unknown."""
    if model.price is not None:
        p = model.price
        return Price(
            p.input_per_mtok, p.output_per_mtok, "config", None, p.cache_read_per_mtok, p.cache_write_per_mtok
        )
    if model.provider == "local":
        return Price(0.0, 0.0, "local")
    entry = map_entry(model.litellm_model)
    if entry is None:
        return None
    name, info = entry
    return Price(
        float(info.get("input_cost_per_token") or 0.0) * MTOK,
        float(info.get("output_cost_per_token") or 0.0) * MTOK,
        "litellm",
        name,
        _per_mtok(info.get("cache_read_input_token_cost")),
        _per_mtok(info.get("cache_creation_input_token_cost")),
    )


def _per_mtok(per_token: Any) -> float | None:
    return float(per_token) * MTOK if isinstance(per_token, int | float) else None


def map_entry(litellm_model: str) -> tuple[str, dict[str, Any]] | None:
    """litellm's price-map entry of a model id (``openai/gpt-5.1-2025-11-13`` → ``gpt-5.1-2025-11-13``):
    the id itself, then the id without its provider prefix, when that entry belongs to the same provider."""
    costs: dict[str, Any] = get_litellm().model_cost
    provider, _, bare = litellm_model.partition("/")
    for name in (litellm_model, bare):
        info = costs.get(name)
        if not isinstance(info, dict) or "input_cost_per_token" not in info:
            continue
        owner = str(info.get("litellm_provider") or "")
        if name == litellm_model or not owner or owner.startswith(provider) or provider.startswith(owner):
            return name, info
    return None


def max_output_tokens(litellm_model: str) -> int | None:
    """The model's output-token limit from litellm's map (None when unknown)."""
    entry = map_entry(litellm_model)
    value = entry[1].get("max_output_tokens") if entry else None
    return int(value) if isinstance(value, int | float) and value > 0 else None
