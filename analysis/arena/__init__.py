"""Arena (iterated prisoner's dilemma) analysis: payoffs, cooperation, retaliation/forgiveness, figures."""
