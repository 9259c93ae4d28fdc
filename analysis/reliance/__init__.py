"""Reliance-benchmark metrics from run directories (never imports the game, the agents or the engine)."""
