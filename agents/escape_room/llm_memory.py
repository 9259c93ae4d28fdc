"""What an LLM agent carries across games: ``none``, ``transcript``, ``reflection``, ``transcript_reflection``
(both: the reference study's default pairing) or ``ledger``.

The context a memory gives is fixed for the duration of a game (computed at game start), so the prompt
prefix of a seat stays the same within a game; this game's announcements come from the observation.
"""

from __future__ import annotations

from games.escape_room.types import Decision, GameSummary, Observation, RoundReport

MEMORY_MODES = ("none", "transcript", "reflection", "transcript_reflection", "ledger")
MAX_EVENT_CHARS = 1_000  # one event (e.g. a long reasoning) is cut to this length in the transcript


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Memory:
    """Base: no memory (``none``). Subclasses keep what their mode says and render it as text."""

    mode = "none"
    reflects = False  # whether the agent writes a reflection into this memory after each game

    def __init__(self) -> None:
        self._context = ""
        self.game_events: list[str] = []  # this game's events (also the reflection's input)

    def context(self) -> str:
        """The memory text for prompts in the current game."""
        return self._context

    def start_game(self, obs: Observation) -> None:
        self.game_events = [
            f"Game {obs.game}: you are {obs.seat} and own {obs.puzzle.slot} ({obs.puzzle.text})."
        ]
        self._context = self.render()

    def render(self) -> str:
        return ""

    def record_decision(self, obs: Observation, decision: Decision) -> None:
        what = decision.action.describe() if decision.action else "invalid answer (counted as Pass)"
        text = f"G{obs.game} R{obs.round} you chose {what}."
        if decision.reasoning:
            text += f" Your reasoning: {decision.reasoning.strip()}"
        self.game_events.append(_cut(text, MAX_EVENT_CHARS))

    def record_round(self, report: RoundReport, text: str | None = None) -> None:
        """A round's announcement (``text``: as the agent rendered it; default ``report.text()``)."""
        text = report.text() if text is None else text
        self.game_events.append(_cut(f"G{report.game} {text}", MAX_EVENT_CHARS))

    def end_game(self, summary: GameSummary) -> None:
        self.game_events.append(_cut(summary.text(), MAX_EVENT_CHARS))

    def game_log(self) -> str:
        return "\n".join(self.game_events)


class TranscriptMemory(Memory):
    """The agent's own event history (reasoning, actions, announcements, end-of-game summaries), newest
    ``max_events`` events and at most ``max_chars`` characters, as in the reference.

    ``trim="exact"`` keeps the newest events that fit (the reference). ``trim="block"`` drops old events
    only when a limit is exceeded, and then down to 75% of the limits, so the head of the window (the
    prompt prefix) stays unchanged for several games: a local model then reuses its KV cache instead of
    re-reading the whole transcript every game. Both stay within the limits.
    """

    mode = "transcript"
    BLOCK_KEEP = 0.75

    def __init__(self, max_events: int = 100, max_chars: int = 12_000, trim: str = "exact") -> None:
        super().__init__()
        if trim not in ("exact", "block"):
            raise ValueError(f"transcript trim must be exact or block, got {trim!r}")
        self.max_events = max_events
        self.max_chars = max_chars
        self.trim = trim
        self.events: list[str] = []
        self._start = 0  # block trim: index of the oldest kept event

    def end_game(self, summary: GameSummary) -> None:
        super().end_game(summary)
        self.events.extend(self.game_events)

    @staticmethod
    def _over(events: list[str], max_events: int, max_chars: int) -> bool:
        return len(events) > max_events or sum(len(e) + 1 for e in events) > max_chars

    def render(self) -> str:
        if self.trim == "block":
            if self._over(self.events[self._start :], self.max_events, self.max_chars):
                keep_events = int(self.max_events * self.BLOCK_KEEP)
                keep_chars = int(self.max_chars * self.BLOCK_KEEP)
                while self._start < len(self.events) and self._over(
                    self.events[self._start :], keep_events, keep_chars
                ):
                    self._start += 1
            return "\n".join(self.events[self._start :])
        kept: list[str] = []
        total = 0
        for event in reversed(self.events[-self.max_events :] if self.max_events else []):
            if total + len(event) + 1 > self.max_chars:
                break
            kept.append(event)
            total += len(event) + 1
        return "\n".join(reversed(kept))


class ReflectionMemory(Memory):
    """A model-written reflection (at most ``max_words`` words) that replaces the previous one each game."""

    mode = "reflection"
    reflects = True

    def __init__(self, max_words: int = 300) -> None:
        super().__init__()
        self.max_words = max_words
        self.reflection = ""

    def set_reflection(self, text: str) -> None:
        words = text.split()
        self.reflection = " ".join(words[: self.max_words])

    def render(self) -> str:
        return reflection_text(self.reflection)


def reflection_text(reflection: str) -> str:
    """How a reflection appears in the memory text ("" before the first one)."""
    return f"Your reflection after the last game: {reflection}" if reflection else ""


class TranscriptReflectionMemory(TranscriptMemory):
    """The transcript, then the model-written reflection (the reference study's default: ``max_allowed``
    context with the ``evolving`` reflection)."""

    mode = "transcript_reflection"
    reflects = True

    def __init__(
        self, max_events: int = 100, max_chars: int = 12_000, trim: str = "exact", max_words: int = 300
    ) -> None:
        super().__init__(max_events, max_chars, trim)
        self.max_words = max_words
        self.reflection = ""

    set_reflection = ReflectionMemory.set_reflection

    def render(self) -> str:
        return "\n\n".join(p for p in (super().render(), reflection_text(self.reflection)) if p)


class LedgerMemory(Memory):
    """A simulator-written compact summary per past game, from the agent's own observations only."""

    mode = "ledger"

    def __init__(self, max_games: int = 20) -> None:
        super().__init__()
        self.max_games = max_games
        self.lines: list[str] = []
        self._verified: list[int] = []

    def start_game(self, obs: Observation) -> None:
        self._verified = []
        super().start_game(obs)

    def record_decision(self, obs: Observation, decision: Decision) -> None:
        super().record_decision(obs, decision)
        if decision.action is not None and decision.action.kind == "verify" and decision.action.target:
            self._verified.append(decision.action.target)

    def end_game(self, summary: GameSummary) -> None:
        super().end_game(summary)
        self.lines.append(ledger_line(summary, self._verified))
        self.lines = self.lines[-self.max_games :] if self.max_games else []

    def render(self) -> str:
        return "\n".join(self.lines)


def ledger_line(summary: GameSummary, verified: list[int]) -> str:
    """One past game in one line: outcome, conflicts seen per puzzle, failed volunteers, deaths."""
    conflicts: dict[int, set[str]] = {}
    failed: list[str] = []
    deaths: list[str] = []
    for report in summary.reports:
        for v in report.verifications:
            if v.created:
                conflicts.setdefault(v.puzzle, set()).add(v.capsule)
        if report.chosen_volunteer and report.password_correct is False:
            failed.append(report.chosen_volunteer)
        deaths += [f"{seat} ({cause.replace('_', ' ')})" for seat, cause in report.deaths]
    outcome = f"escaped in round {summary.rounds}" if summary.escaped else "did not escape"
    parts = [f"Game {summary.game}: {outcome}; your score {summary.own_score}."]
    if conflicts:
        seen = "; ".join(f"Q{k} new capsule(s) {', '.join(sorted(v))}" for k, v in sorted(conflicts.items()))
        parts.append(f"Conflicts: {seen}.")
    else:
        parts.append("No conflicts.")
    if failed:
        parts.append(f"Failed volunteers: {', '.join(failed)}.")
    if deaths:
        parts.append(f"Deaths: {', '.join(deaths)}.")
    if verified:
        parts.append(f"You verified: {', '.join(f'Q{k}' for k in verified)}.")
    if summary.capsule_truth:
        wrong = [label for label, ok in summary.capsule_truth.items() if not ok]
        parts.append(f"Wrong capsules: {', '.join(wrong) or 'none'}.")
    return " ".join(parts)


def make_memory(
    mode: str,
    *,
    max_events: int = 100,
    max_chars: int = 12_000,
    max_words: int = 300,
    max_games: int = 20,
    trim: str = "exact",
) -> Memory:
    """A fresh memory for a mode (``ValueError`` names the allowed modes)."""
    if mode == "none":
        return Memory()
    if mode == "transcript":
        return TranscriptMemory(max_events, max_chars, trim)
    if mode == "reflection":
        return ReflectionMemory(max_words)
    if mode == "transcript_reflection":
        return TranscriptReflectionMemory(max_events, max_chars, trim, max_words)
    if mode == "ledger":
        return LedgerMemory(max_games)
    raise ValueError(f"memory mode must be one of {', '.join(MEMORY_MODES)}, got {mode!r}")
