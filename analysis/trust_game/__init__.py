"""Trust-game (Berg 1995 investment game) analysis: trust, trustworthiness, reciprocity, human references."""
