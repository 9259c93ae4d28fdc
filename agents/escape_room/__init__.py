"""Escape-room agents: each registers with the game (its ``agent`` group schema comes from its constructor)."""

from agents.escape_room.bayes import BayesAgent
from agents.escape_room.llm_agent import LLMAgent
from agents.escape_room.scripted import AlwaysVerify, Consensus, NeverVerify, RandomPolicy
from trustsim.contract import register_agent

GAME = "escape_room"
_MEMORY = ("memory",)  # supplied by the game from the `memory` group

register_agent(
    GAME,
    "bayes",
    BayesAgent,
    exclude=_MEMORY,
    description="Beta belief per partner; verifies when worth a coin",
)
register_agent(
    GAME, "always_verify", AlwaysVerify, exclude=_MEMORY, description="verifies while it has coins"
)
register_agent(GAME, "never_verify", NeverVerify, exclude=_MEMORY, description="trusts every capsule")
register_agent(GAME, "consensus", Consensus, exclude=_MEMORY, description="verifies unendorsed puzzles")
register_agent(GAME, "random", RandomPolicy, exclude=_MEMORY, description="uniform random actions")
register_agent(GAME, "llm", LLMAgent, exclude=_MEMORY, uses_llm=True, description="a language-model agent")
