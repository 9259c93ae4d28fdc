"""analysis reliance: pair metrics count every pair once, also in runs made when two pairs shared an id."""

from __future__ import annotations

import pandas as pd

from analysis.reliance.metrics import pair_metrics


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
