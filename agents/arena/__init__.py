"""Arena players: the scripted IPD strategies and the LLM player, registered with the arena game."""

from agents.arena.llm_player import LLMPlayer
from agents.arena.scripted import (
    Cooperator,
    Defector,
    ForecastingTitForTat,
    GenerousTitForTat,
    GrimTrigger,
    NoisyTitForTat,
    Pavlov,
    RandomPlayer,
    SuspiciousTitForTat,
    TitForTat,
)
from trustsim.contract import register_agent

GAME = "arena"
for _name, _cls in (
    ("ipd_always_cooperate", Cooperator),
    ("ipd_always_defect", Defector),
    ("ipd_tit_for_tat", TitForTat),
    ("ipd_suspicious_tit_for_tat", SuspiciousTitForTat),
    ("ipd_grim_trigger", GrimTrigger),
    ("ipd_pavlov", Pavlov),
    ("ipd_generous_tit_for_tat", GenerousTitForTat),
    ("ipd_noisy_tit_for_tat", NoisyTitForTat),
    ("ipd_forecasting_tit_for_tat", ForecastingTitForTat),
    ("random", RandomPlayer),
):
    register_agent(GAME, _name, _cls, description=(_cls.__doc__ or "").strip().splitlines()[0])
register_agent(GAME, "llm", LLMPlayer, uses_llm=True, description="a language-model player")
