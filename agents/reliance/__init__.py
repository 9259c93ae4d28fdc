"""Reliance-scenario decision makers: the exact oracle, myopic and random baselines, and the LLM agent."""
