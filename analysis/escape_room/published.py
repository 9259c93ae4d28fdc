"""Published anchor cells of the reference study (memoryless, D correct), for use when data lack them.

Source: ``specs/escape_room.md`` ("Reference numbers"), quoting Chen (2026). These are point values
without intervals; a delta against them carries only the schedule cell's uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedAnchor:
    """Verifications per game and partner share of a published memoryless D-correct cell."""

    model: str
    volume: float
    partner_share: float


PUBLISHED_ANCHORS: tuple[PublishedAnchor, ...] = (
    PublishedAnchor("gpt-5.1", 2.80, 0.071),
    PublishedAnchor("gemini-3.1-pro", 2.64, 0.030),
    PublishedAnchor("claude-opus-4-6", 4.86, 0.243),
    PublishedAnchor("claude-sonnet-4-6", 5.30, 0.236),
    PublishedAnchor("gpt-5.4-mini", 1.94, 0.144),
    PublishedAnchor("gemini-2.5-flash", 6.16, 0.256),
)


def published_anchor(model: str) -> PublishedAnchor | None:
    """The published anchor of ``model``, matching dated/preview suffixes (``gpt-5.4-mini-2026-03-17``)."""
    name = model.split("/")[-1].split(":")[-1].lower()
    best: PublishedAnchor | None = None
    for anchor in PUBLISHED_ANCHORS:
        key = anchor.model.lower()
        if (name == key or name.startswith(key + "-")) and (best is None or len(key) > len(best.model)):
            best = anchor
    return best
