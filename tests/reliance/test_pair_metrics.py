"""analysis reliance: pair metrics count every pair once, also in runs made when two pairs shared an id."""

from __future__ import annotations

import pandas as pd

from analysis.reliance.metrics import MIN_BLUEPRINTS, main_metrics, pair_metrics


def _side(pair: str, side: str, stable: bool, action: str, optimal: bool = True) -> dict:
    return {
        "run_id": "r", "session": 0, "system": "oracle", "set": "pairs", "pair": pair, "pair_side": side,
        "pair_stable": stable, "action": action, "optimal": optimal, "valid": True,
    }  # fmt: skip


def test_a_differing_and_a_stable_pair_sharing_an_id_are_two_pairs():
    rows = [
        _side("pair.x.repeated.1", "a", False, "delegate_P"),
        _side("pair.x.repeated.1", "b", False, "delegate_Q"),
        _side("pair.x.repeated.1", "a", True, "delegate_P"),
        _side("pair.x.repeated.1", "b", True, "delegate_P"),
        _side("pair.y.repeated.1", "a", True, "backup", optimal=False),
        _side("pair.y.repeated.1", "b", True, "backup"),
    ]
    t = pair_metrics(pd.DataFrame(rows), 0.95).set_index("metric")
    assert t.loc["pair_accuracy", ["k", "n"]].tolist() == [2, 3]
    assert t.loc["relation_agreement", ["k", "n"]].tolist() == [3, 3]
    assert t.loc["stable_pair_agreement", ["k", "n"]].tolist() == [2, 2]


def _main_rows(system: str, blueprints: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    stages, scenarios = [], []
    for b in range(blueprints):
        for k in range(3):
            stages.append({"system": system, "set": "main", "show_posterior": False, "blueprint": f"b{b}",
                           "optimal": k != 0, "valid": True, "value_range": 1.0, "regret": 0.1 * (k == 0)})  # fmt: skip
        scenarios.append({"system": system, "set": "main", "show_posterior": False, "blueprint": f"b{b}",
                          "all_optimal": False})  # fmt: skip
    return pd.DataFrame(stages), pd.DataFrame(scenarios)


def test_main_metrics_carry_sample_sizes_and_flag_few_blueprints():
    big = _main_rows("oracle", 12)
    small = _main_rows("tiny", 2)
    stages = pd.concat([big[0], small[0]], ignore_index=True)
    scenarios = pd.concat([big[1], small[1]], ignore_index=True)
    t = main_metrics(stages, scenarios, n_resamples=200, seed=0, level=0.95).set_index("system")
    assert t.loc["oracle", "blueprints"] == 12 and t.loc["oracle", "note"] == ""
    assert t.loc["tiny", "blueprints"] == 2
    assert (
        t.loc["tiny", "note"]
        == f"underpowered: 2 blueprints (< {MIN_BLUEPRINTS}); no interval (< 3 blueprints)"
    )
    assert pd.isna(t.loc["tiny", "macro_accuracy_low"]) and t.loc["tiny", "macro_accuracy"] > 0.6
    assert not pd.isna(t.loc["oracle", "macro_accuracy_low"])
