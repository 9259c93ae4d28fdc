"""Reliance-scenario decision makers: the exact oracle, myopic and random baselines, and the LLM agent."""

from agents.reliance.llm_agent import LLMAgent
from agents.reliance.myopic import MyopicAgent
from agents.reliance.oracle import OracleAgent
from agents.reliance.random_agent import RandomAgent
from trustsim.contract import register_agent

GAME = "reliance"
register_agent(GAME, "oracle", OracleAgent, description="exact optimal reference")
register_agent(GAME, "myopic", MyopicAgent, description="least immediate expected cost")
register_agent(GAME, "random", RandomAgent, description="uniform random admissible action")
register_agent(GAME, "llm", LLMAgent, uses_llm=True, description="a language-model agent")
