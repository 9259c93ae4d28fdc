"""Re-export: the scripted partner D is part of the game's world (``games.escape_room.partner``)."""

from games.escape_room.partner import ScriptedPartner

__all__ = ["ScriptedPartner"]
