"""Value types shared by the escape-room rules, model and agents."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, overload

ActionKind = Literal["pass", "verify", "volunteer"]
SEATS: tuple[str, ...] = ("A", "B", "C", "D")


@dataclass(frozen=True, slots=True)
class Puzzle:
    """An arithmetic puzzle; ``index`` is 1-based (Q1..Q4)."""

    index: int
    text: str
    answer: int

    @property
    def slot(self) -> str:
        return f"Q{self.index}"


@dataclass(slots=True)
class Capsule:
    """A sealed answer for one puzzle; only ``label`` and ``endorsers`` are public."""

    label: str
    puzzle: int
    value: int
    endorsers: list[str] = field(default_factory=list)


class CapsuleView(NamedTuple):
    """The public face of a capsule (an immutable pair)."""

    label: str
    endorsers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Action:
    """A requested action. ``target`` is a 1-based puzzle index; ``password`` maps puzzle index → capsule label."""

    kind: ActionKind
    target: int | None = None
    password: dict[int, str] | None = None

    @staticmethod
    def pass_() -> Action:
        """A pass (one shared instance: an Action is immutable and a pass has nothing else)."""
        return _PASS

    @staticmethod
    def verify(target: int) -> Action:
        return Action("verify", target=target)

    @staticmethod
    def volunteer(password: dict[int, str]) -> Action:
        return Action("volunteer", password=dict(password))

    @property
    def target_puzzle(self) -> int:
        """A verify action's target (1-based puzzle index)."""
        if self.target is None:
            raise ValueError(f"a {self.kind} action has no target puzzle")
        return self.target

    @property
    def password_labels(self) -> dict[int, str]:
        """A volunteer action's password (puzzle index → capsule label; empty when it names none)."""
        return self.password or {}

    def describe(self) -> str:
        """Reference-style text: ``Pass``, ``Verify: Q4``, ``Volunteer: Q1-A, Q2-B, ...`` (``Volunteer`` when it
        names no capsule: a malformed password that stays a volunteer under ``malformed_volunteer=die``)."""
        if self.kind == "verify":
            return f"Verify: Q{self.target}"
        if self.kind == "volunteer":
            password = self.password or {}
            return (
                "Volunteer: " + ", ".join([password[k] for k in sorted(password)])
                if password
                else "Volunteer"
            )
        return "Pass"


_PASS = Action("pass")


@dataclass(slots=True)
class Decision:
    """What a policy returns: the requested action plus everything worth recording.

    ``action`` is None when the model output could not be parsed (``invalid``); the game then resolves a pass.
    ``confidence`` maps puzzle index → stated probability that the capsule the agent trusts most holds the
    right answer; ``trusted`` optionally names that capsule per puzzle.
    """

    action: Action | None
    raw_text: str | None = None
    reasoning: str | None = None
    confidence: dict[int, float] | None = None
    trusted: dict[int, str] | None = None
    parse_error: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    request_key: str | None = None  # the request-store key of a model's answer (the viewer shows the request)
    cached_tokens: int = 0  # prompt tokens read from the provider's prompt cache (part of prompt_tokens)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """A model call that is not a decision (a puzzle solved to verify or as the seat's own answer, a reflection
    between games): its raw text and accounting, recorded on the event it explains; ``request_key`` is its
    request-store key (the viewer shows the exact request)."""

    raw_text: str
    request_key: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cached: bool = False


@dataclass(frozen=True, slots=True)
class Solution:
    """A seat's private answer to a puzzle (None: no usable answer) and the model call that gave it (None for a
    scripted seat, which solves exactly)."""

    answer: int | None
    call: ModelCall | None = None


@dataclass(slots=True)
class Observation:
    """Everything one seat sees at the start of a round (the same public state for all seats)."""

    seat: str
    game: int  # 1-based game index within the session
    round: int  # 1-based
    max_rounds: int
    puzzle: Puzzle  # this seat's own puzzle, answer included
    coins: dict[str, int]  # every seat's coins (public)
    alive: tuple[str, ...]
    capsules: dict[int, tuple[CapsuleView, ...]]  # puzzle index → capsules
    owners: dict[int, str]  # puzzle index → seat that owns it
    history: Sequence[str]  # announcements so far in this game, oldest first (a tuple or Announcements)

    @property
    def my_coins(self) -> int:
        return self.coins[self.seat]


@dataclass(slots=True)
class VerificationReport:
    seat: str
    puzzle: int
    capsule: str
    created: bool  # True when the verifier's answer matched no capsule and opened a new one
    already: bool = False  # True when the verifier already endorsed the matching capsule (e.g. its own)
    endorsers: tuple[str, ...] = ()  # the capsule's endorsers right after this verification


@dataclass(slots=True)
class RoundReport:
    """The public announcement after a round resolves."""

    game: int
    round: int
    actions: dict[str, str]  # seat → described resolved action
    verifications: tuple[VerificationReport, ...]
    volunteers: tuple[str, ...]
    chosen_volunteer: str | None
    password: dict[int, str] | None
    password_correct: bool | None
    deaths: tuple[tuple[str, str], ...]  # (seat, cause)
    escaped: bool

    def text(self, announce_passes: bool = True) -> str:
        """A compact human-readable announcement (what LLM agents read); without ``announce_passes`` the
        seats that passed are not listed."""
        acted = {s: a for s, a in self.actions.items() if announce_passes or a != "Pass"}
        head = ", ".join(f"{s} {a}" for s, a in acted.items()) if acted else "no verifications or volunteers"
        parts = [f"Round {self.round}: {head}."]
        for v in self.verifications:
            verb = "disagreed and opened" if v.created else "already endorsed" if v.already else "endorsed"
            parts.append(f"{v.seat} verified Q{v.puzzle} and {verb} capsule {v.capsule}.")
        if self.chosen_volunteer:
            ok = "correct: the team escaped" if self.password_correct else "wrong"
            pw = ", ".join(self.password[k] for k in sorted(self.password)) if self.password else ""
            parts.append(f"{self.chosen_volunteer} submitted [{pw}]; password {ok}.")
        for seat, cause in self.deaths:
            parts.append(f"{seat} died ({cause.replace('_', ' ')}).")
        return " ".join(parts)


@dataclass(slots=True)
class GameSummary:
    """What every seat learns at game end."""

    game: int
    escaped: bool
    rounds: int
    survivors: tuple[str, ...]
    coins: dict[str, int]
    scores: dict[str, int]
    own_score: int
    seat: str
    reports: tuple[RoundReport, ...]
    capsule_truth: dict[str, bool] | None = None  # label → correct, only with reveal_after_game

    def text(self) -> str:
        outcome = "escaped" if self.escaped else "did not escape"
        coins = ", ".join(f"{s}={c}" for s, c in self.coins.items())
        text = (
            f"Game {self.game} ended after {self.rounds} rounds: the team {outcome}. "
            f"Survivors: {', '.join(self.survivors) or 'none'}. Coins: {coins}. Your score: {self.own_score}."
        )
        if self.capsule_truth:
            right = [k for k, v in self.capsule_truth.items() if v]
            wrong = [k for k, v in self.capsule_truth.items() if not v]
            text += f" Right capsules: {', '.join(right) or 'none'}; wrong: {', '.join(wrong) or 'none'}."
        return text


class Announcements(Sequence[str]):
    """The announcements of a game's first ``n`` rounds, oldest first: a read-only sequence of texts, each
    rendered (``RoundReport.text()``) when first read and kept for every later reader. Scripted agents never
    read them, so their games render none. Equal to (and hashed as) the tuple of its texts."""

    __slots__ = ("_n", "_reports", "_texts")

    def __init__(self, reports: Sequence[RoundReport], texts: list[str], n: int) -> None:
        """``reports``: the game's reports so far (at least ``n``); ``texts``: the rendered ones, shared by every
        Announcements of the game (it grows as texts are read)."""
        self._reports = reports
        self._texts = texts
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        i = range(self._n)[index]  # IndexError out of range; negative indices count from the end
        texts = self._texts
        while len(texts) <= i:
            texts.append(self._reports[len(texts)].text())
        return texts[i]

    def __iter__(self) -> Iterator[str]:
        for i in range(self._n):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Announcements | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))
