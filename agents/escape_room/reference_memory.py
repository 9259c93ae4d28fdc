"""The reference study's agent memory (cyjabc2020/Escape-room-v2 @ 74f0fd1, ``agents/base_agent.py``).

Raw events, exactly as the reference adds them (rules block, new-game lines, the model's whole answer, the
extracted action, announcements, the end summary, the review header), and the context recomputed at every
call:

- ``max_allowed`` (the study's persistent memory; trustsim ``transcript``): the newest events, at most
  ``max_events`` (window 100) and ``max_chars`` (3,000 tokens x 4 = 12,000 characters, each event counted
  with its newline) over *all* events including the current game's (base_agent.py:152-177);
- ``current_game_only`` (the memoryless anchor; trustsim ``none``): this game's events only
  (base_agent.py:148-150);
- optionally the evolving reflection after the events (base_agent.py:110-129, 183-199).
"""

from __future__ import annotations

from agents.escape_room.reference_prompt import reflection_block

REFERENCE_MODES = ("max_allowed", "current_game_only")


def window(events: list[str], max_events: int, max_chars: int) -> list[str]:
    """base_agent.py:156-177: newest events first while both limits hold; stop at the first that does not
    fit (an older, shorter event is not taken after a longer one failed)."""
    kept: list[str] = []
    total = 0
    for i, event in enumerate(reversed(events)):
        if i >= max_events:
            break
        size = len(event) + 1
        if total + size > max_chars:
            break
        kept.append(event)
        total += size
    kept.reverse()
    return kept


class ReferenceMemory:
    """One agent's short-term events (all games) and its evolving reflection."""

    def __init__(
        self,
        mode: str = "max_allowed",
        max_events: int = 100,
        max_chars: int = 12_000,
        evolving: bool = False,
    ) -> None:
        if mode not in REFERENCE_MODES:
            raise ValueError(
                f"reference memory mode must be one of {', '.join(REFERENCE_MODES)}, got {mode!r}"
            )
        self.mode = mode
        self.max_events = max_events
        self.max_chars = max_chars
        self.evolving = evolving
        self.events: list[str] = []  # every event since the agent was created (base_agent.py:47)
        self.current: list[str] = []  # this game's events (current_game_only, base_agent.py:54)
        self.reflection = ""
        self.games_started = 0
        self.game_starts: dict[int, int] = {}  # game → index of its first event (horizon checks)

    def add(self, event: str) -> None:
        """base_agent.py:63-69."""
        self.events.append(event)
        if self.mode == "current_game_only":
            self.current.append(event)

    def new_game(self) -> None:
        """base_agent.py:71-74 (a persistent agent's current-game memory restarts)."""
        self.games_started += 1
        if self.mode == "current_game_only":
            self.current = []

    def short_term(self) -> str:
        if self.mode == "current_game_only":
            return "\n".join(self.current)
        return "\n".join(window(self.events, self.max_events, self.max_chars))

    def context(self) -> str:
        """base_agent.py:110-129: short-term events, then the reflection, joined by a blank line."""
        parts = [p for p in (self.short_term(), self._long_term()) if p]
        return "\n\n".join(parts)

    def _long_term(self) -> str:
        return reflection_block(self.reflection) if self.evolving and self.reflection else ""

    def mark_game(self, game: int) -> None:
        """Remember where a game's events begin (for :meth:`oldest_game_in_context`)."""
        self.game_starts[game] = len(self.events)

    def oldest_game_in_context(self) -> int | None:
        """The earliest game with events still in the context (the memory horizon), or None."""
        if self.mode == "current_game_only":
            return max(self.game_starts) if self.game_starts and self.current else None
        kept = window(self.events, self.max_events, self.max_chars)
        if not kept:
            return None
        first = len(self.events) - len(kept)
        games = [g for g, start in self.game_starts.items() if start <= first]
        return max(games) if games else None
