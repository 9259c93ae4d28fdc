"""Reading the public capsule table: which capsules are verified, which one to trust, a full password."""

from __future__ import annotations

from games.escape_room.types import CapsuleView, Observation


def original_label(puzzle: int, owner: str) -> str:
    return f"Q{puzzle}-{owner}"


def is_verified(capsule: CapsuleView, owner: str) -> bool:
    """A capsule some seat other than the puzzle's owner computed or endorsed."""
    return any(e != owner for e in capsule.endorsers)


def trusted_capsule(obs: Observation, puzzle: int) -> CapsuleView:
    """The capsule to trust for a puzzle: own capsule for one's own puzzle; else prefer verified capsules,
    then more endorsers, then the earliest (the owner's original)."""
    capsules = obs.capsules[puzzle]
    owner = obs.owners[puzzle]
    if owner == obs.seat:
        return next((c for c in capsules if obs.seat in c.endorsers), capsules[0])
    return max(capsules, key=lambda c: (is_verified(c, owner), len(c.endorsers), -capsules.index(c)))


def unverified_puzzles(obs: Observation) -> list[int]:
    """Puzzles other than one's own whose trusted capsule nobody but the owner vouches for."""
    return [
        k
        for k in sorted(obs.capsules)
        if obs.owners[k] != obs.seat and not is_verified(trusted_capsule(obs, k), obs.owners[k])
    ]


def best_password(obs: Observation) -> dict[int, str]:
    return {k: trusted_capsule(obs, k).label for k in sorted(obs.capsules)}
