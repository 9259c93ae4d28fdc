"""Column lists of the reliance run-directory tables (documented in docs/reliance.md)."""

from __future__ import annotations

from games.predictions import PREDICTION_COLUMNS as PREDICTION_COLUMNS  # the shared schema, re-exported

STAGE_COLUMNS = [
    "run_id", "session", "set", "item", "item_index", "scenario", "blueprint", "category", "process",
    "pair", "pair_side", "pair_stable", "stage", "n_stages", "node", "history", "agent", "model",
    "show_posterior", "actions", "action", "raw_action", "valid", "invalid_reason", "action_kind",
    "optimal", "optimal_actions", "n_optimal", "myopic_actions", "myopic", "learning_pays", "q_values",
    "q_chosen", "v_star", "q_max", "value_range", "regret", "immediate_cost", "is_test", "test_benefit",
    "zero_benefit_test", "useful_test_available", "support_optimal", "support_target_wrong",
    "protective", "protective_optimal", "confidence", "p_exact", "outcome", "observation", "cost",
    "prompt_tokens", "completion_tokens",
]  # fmt: skip

SCENARIO_COLUMNS = [
    "run_id", "session", "set", "item", "item_index", "scenario", "blueprint", "category", "process",
    "pair", "pair_side", "agent", "model", "show_posterior", "decisions", "stages_reached", "n_stages",
    "all_optimal", "error", "total_cost", "v_star_root", "adaptation_value",
]  # fmt: skip
