"""Re-export of the arena player interface, which the game owns (``games.arena.policy``)."""

from games.arena.policy import COOPERATE, DEFECT, ArenaPlayer, last_or

__all__ = ["COOPERATE", "DEFECT", "ArenaPlayer", "last_or"]
