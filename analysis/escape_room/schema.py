"""Column sets of the tidy trust tables (shared by the run-directory loader and the log importer)."""

from __future__ import annotations

CELL_KEYS = ("model", "schedule", "memory", "partner_slot", "agent", "prompt", "team")
"""Keys identifying an experimental cell (a cell = model × schedule × memory [× partner slot, agent, prompt
style: ``reference`` | ``trustsim`` for LLM agents, empty for scripted ones; team composition of a mixed team,
``A=llm:m1;B=llm:m1;C=bayes``, empty when every seat plays the agent / model groups])."""

DECISION_COLUMNS = (
    "source", "run_id", "session", "game", "round", "seat", "is_partner", *CELL_KEYS,
    "d_correct", "partner_puzzle", "own_puzzle", "action", "target", "valid", "invalid_reason",
    "resolved_action", "verify_partner",
)  # fmt: skip

GAME_COLUMNS = (
    "source", "run_id", "session", "game", *CELL_KEYS, "seed", "d_correct", "partner_puzzle",
    "outcome", "escaped", "rounds", "escape_round", "verifications", "partner_verifications",
    "protective_verifications", "volunteers", "deaths_wrong_password", "deaths_no_volunteer",
    "survivors", "invalid",
)  # fmt: skip

AGENT_GAME_COLUMNS = (
    "source", "run_id", "session", "game", "seat", "is_partner", *CELL_KEYS, "d_correct", "survived",
    "death_cause", "death_round", "rounds_alive", "coins", "score", "verifications",
)  # fmt: skip

RUN_COLUMNS = (
    "source", "run_id", "path", *CELL_KEYS, "sessions", "games", "config_key", "status", "answers",
    "invalid_answers", "flagged_weak", "weak",
)  # fmt: skip
"""One row per run: where it came from, the configuration fingerprint used to spot mixed cells, and the
weak-model label of the run summary (``answers``/``invalid_answers`` of the seats under test that a model
played, ``flagged_weak``: models whose config says ``weak: true``, ``weak``: why the result is a weak
model's, empty when it is not; :mod:`trustsim.rundir.weak`)."""
