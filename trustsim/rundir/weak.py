"""When a run's result is a weak model's: the one rule the run summary, the trust report and the card share.

A result is labelled weak when a model config of the run says ``weak: true`` (the embedded SmolLM2-135M), or
when more than :data:`WEAK_INVALID_SHARE` of the model's answers were invalid. Only the manifest and the
answer counts are read, so ``analysis`` may use it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

WEAK_INVALID_SHARE = 0.2  # above this share of invalid answers a result is labelled weak


def run_models(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Model configs of the run (the ``model`` group, plus any per-role/per-seat model groups)."""
    config = manifest.get("config") or {}
    found = [config["model"]] if isinstance(config.get("model"), dict) else []
    game = config.get("game") or {}
    for value in game.values() if isinstance(game, dict) else ():
        if isinstance(value, dict) and value.get("litellm_model"):
            found.append(value)
    return found


def flagged_weak(manifest: dict[str, Any]) -> list[str]:
    """Names of the run's models whose config says ``weak: true``."""
    return [str(m.get("name", "?")) for m in run_models(manifest) if m.get("weak")]


def weak_reason(manifest: dict[str, Any], answers: int, invalid: int) -> str | None:
    """Why this result is a weak model's (None: it is not): a model flagged ``weak: true``, or more than
    :data:`WEAK_INVALID_SHARE` of the answers invalid."""
    return describe_weak(flagged_weak(manifest), answers, invalid)


def describe_weak(flagged: Iterable[str], answers: int, invalid: int) -> str | None:
    """:func:`weak_reason` from its parts: the names of models flagged weak and the answer counts (pooled
    over several runs by the trust report and the card)."""
    reasons = []
    names = sorted(dict.fromkeys(flagged))
    if names:
        reasons.append(
            f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} flagged weak (model.weak: true)"
        )
    if answers and invalid / answers > WEAK_INVALID_SHARE:
        reasons.append(f"{invalid} of {answers} answers ({invalid / answers:.0%}) were invalid")
    return "; ".join(reasons) or None
