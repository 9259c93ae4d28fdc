"""The scripted partner D: never verifies or volunteers; its capsule follows the failure schedule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from games.escape_room.policy import EscapeRoomPolicy
from games.escape_room.types import Action, Decision, Observation


class ScriptedPartner(EscapeRoomPolicy):
    name = "scripted_partner"
    classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "uses_llm": False, "memory": "none"}

    def __init__(self, memory: str = "none", schedule: Sequence[bool] = ()) -> None:
        super().__init__(memory="none")
        self.schedule = tuple(schedule)  # the game applies it when sealing D's capsule

    def decide(self, obs: Observation) -> Decision:
        return Decision(Action.pass_())
