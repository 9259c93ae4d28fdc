"""What the announcements of a game say about its original capsules, as facts over truth vectors.

A **world** is the truth vector of a game's four original capsules (the capsule each owner sealed): an
integer mask whose bit ``k − 1`` is set when the original capsule of puzzle ``k`` is right. Every piece of
public evidence is a :class:`Fact`: "the originals of these puzzles were all right" (a verification that
endorsed the original, an escape, the revealed truth) or "were not all right" (a verification that opened or
endorsed another capsule, a failed password). Verifiers are taken as exact, so a capsule a verifier opened is
right and a password that named it is wrong only through the originals it also named.

A seat takes its own original capsule as right unless a verification by another seat (or the revealed
truth) showed it wrong. Facts are applied in order (verdicts first, then passwords); one that contradicts
the facts before it or the seat's own answer is ignored (possible only when verifiers or own answers erred,
as in the reference study's logs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from analysis.yardstick.traces import GameTrace, RoundTrace

PUZZLES = (1, 2, 3, 4)
WORLDS = range(16)


def bit(puzzle: int) -> int:
    """The world bit of a puzzle's original capsule."""
    return 1 << (puzzle - 1)


def mask_of(puzzles: Iterable[int]) -> int:
    """The world bits of these puzzles' original capsules."""
    out = 0
    for k in puzzles:
        out |= 1 << (k - 1)
    return out


@dataclass(frozen=True, slots=True)
class Fact:
    """The original capsules of the puzzles in ``need`` (a mask) were all right (``all_right``) or not."""

    need: int
    all_right: bool

    def holds(self, world: int) -> bool:
        return ((world & self.need) == self.need) == self.all_right


def own_right(own: int, facts: Iterable[Fact]) -> bool:
    """Whether a seat takes its own original capsule as right: unless a verdict said it was wrong."""
    own_bit = bit(own)
    return not any(f.need == own_bit and not f.all_right for f in facts)


def allowed_worlds(own: int, facts: Sequence[Fact]) -> tuple[tuple[int, ...], int]:
    """(the worlds a seat owning puzzle ``own`` considers possible after ``facts``, the mask of the capsules
    the facts it applied mention). Facts apply in order; one that would leave no world is ignored."""
    own_bit = bit(own)
    value = own_bit if own_right(own, facts) else 0
    worlds = [w for w in WORLDS if w & own_bit == value]
    mentioned = 0
    for fact in facts:
        kept = [w for w in worlds if fact.holds(w)]
        if kept:
            worlds = kept
            mentioned |= fact.need
    return tuple(worlds), mentioned


@dataclass
class GameEvidence:
    """What one seat learned about one game's original capsules.

    ``verdicts``: puzzle → whether its original was right (the first verification of it by a seat other than
    its owner, overridden by the revealed truth); ``passwords``: (mask of the originals a submitted password
    named, whether it was right), in order.
    """

    verdicts: dict[int, bool] = field(default_factory=dict)
    passwords: list[tuple[int, bool]] = field(default_factory=list)

    def facts(self) -> list[Fact]:
        """Verdicts first (by puzzle), then the passwords in the order they were submitted."""
        out = [Fact(bit(k), right) for k, right in sorted(self.verdicts.items())]
        return out + [Fact(need, right) for need, right in self.passwords]


def verdict(verifier: str, owner: str, creator: str, created: bool) -> bool | None:
    """What a verification says about the puzzle's original: right (it endorsed the original), wrong (it
    opened or endorsed another capsule), or nothing (an owner verifying its own puzzle changes no capsule)."""
    if verifier == owner:
        return None
    return not created and creator == owner


def add_round(evidence: GameEvidence, rnd: RoundTrace, owners: dict[int, str]) -> None:
    """Add one round's announcement to ``evidence``."""
    for v in rnd.verifications:
        said = verdict(v.seat, owners[v.puzzle], v.creator, v.created)
        if said is not None:
            evidence.verdicts.setdefault(v.puzzle, said)
    if rnd.password is not None and rnd.correct is not None:
        originals = mask_of(k for k, creator in rnd.password.items() if creator == owners.get(k))
        evidence.passwords.append((originals, bool(rnd.correct)))


def heard(game: GameTrace, seat: str) -> GameEvidence:
    """What ``seat`` learned from a finished game: the announcements of the rounds it was alive at the start
    of, and the revealed truth when the game revealed it."""
    evidence = GameEvidence()
    for rnd in game.rounds:
        if seat in rnd.alive:
            add_round(evidence, rnd, game.owners)
    for (k, creator), right in sorted((game.truth or {}).items()):
        if creator == game.owners.get(k):
            evidence.verdicts[k] = bool(right)
    return evidence


def before(game: GameTrace, number: int) -> GameEvidence:
    """The public evidence of the rounds before round ``number`` (every seat alive now heard all of it)."""
    evidence = GameEvidence()
    for rnd in game.rounds:
        if rnd.number >= number:
            break
        add_round(evidence, rnd, game.owners)
    return evidence
