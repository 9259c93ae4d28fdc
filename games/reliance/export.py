"""Export solved scenarios as explicit decision trees (JSONL, one object per decision node)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from games.reliance.solver import Solution


def node_records(sol: Solution) -> Iterator[dict[str, Any]]:
    """One JSON-ready record per decision node: posterior, admissible actions, values, optimal actions and
    feedback branches with probabilities (child node id, or null where the scenario ends)."""
    scn = sol.scenario
    for n in sol.nodes:
        actions = []
        for a in n.actions:
            b = sol.test_benefit(n, a)
            p = sol.success_prob(n, a)
            r = n.regret(a)
            actions.append(
                {
                    "action": a,
                    "kind": scn.actions[a].kind,
                    "q": n.qof(a),
                    "immediate_cost": float(n.imm[n.actions.index(a)]),
                    "regret": None if math.isnan(r) else r,
                    "p_success": p,
                    "test_benefit": b,
                    "branches": [{"obs": o, "p": pr, "child": c} for o, pr, c in n.branch(a)],
                }
            )
        yield {
            "scenario": scn.id,
            "node": n.id,
            "stage": n.stage,
            "posterior": sol.compiled.marginals(n.belief),
            "v": n.v,
            "optimal": list(n.optimal),
            "myopic": list(n.myopic),
            "value_range": n.value_range,
            "actions": actions,
        }


def write_jsonl(solutions: Iterable[Solution], out: IO[str]) -> int:
    """Write every node of every solution; returns the number of lines."""
    count = 0
    for sol in solutions:
        for rec in node_records(sol):
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            count += 1
    return count


def export_library(solutions: Iterable[Solution], path: Path) -> int:
    """Write the JSONL tree export to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        return write_jsonl(solutions, fh)
