"""Re-export of the escape-room policy interface, which the game owns (``games.escape_room.policy``)."""

from games.escape_room.policy import EscapeRoomPolicy, Services

__all__ = ["EscapeRoomPolicy", "Services"]
