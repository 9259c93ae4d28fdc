"""Trust-game players: scripted baselines (tg_*) and the LLM player; each can play either role."""

from __future__ import annotations

from agents.trust_game.llm_player import LLMTrustPlayer
from agents.trust_game.scripted import Fair, Human, RandomPlayer, Reciprocal, Selfish
from trustsim.contract import register_agent

GAME = "trust_game"

register_agent(GAME, "tg_selfish", Selfish, description="subgame-perfect: sends 0, returns 0")
register_agent(GAME, "tg_fair", Fair, description="sends all, returns half of what it received")
register_agent(
    GAME, "tg_reciprocal", Reciprocal, description="sends by the last return ratio, returns by trust"
)
register_agent(GAME, "tg_random", RandomPlayer, description="uniform amounts")
register_agent(
    GAME, "tg_human", Human, description="Berg 1995 sent distribution; returns drawn with mean share 0.37"
)
register_agent(GAME, "llm", LLMTrustPlayer, uses_llm=True, description="a language model (model group)")
