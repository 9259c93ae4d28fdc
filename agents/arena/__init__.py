"""Arena (iterated prisoner's dilemma) players: scripted strategies and the LLM player."""
