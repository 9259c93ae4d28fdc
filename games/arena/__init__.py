"""The repeated cooperation arena: the iterated prisoner's dilemma with stated confidence."""
