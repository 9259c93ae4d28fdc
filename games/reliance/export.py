"""Export solved scenarios as explicit decision trees (JSONL, one object per decision node)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from games.reliance.solver import PROB_EPS, Solution


def node_records(sol: Solution) -> Iterator[dict[str, Any]]:
    """One JSON-ready record per decision node.

    Fields: scenario, node, stage, posterior (per channel), v (V*), optimal, myopic, value_range and
    ``actions``: per admissible action ``{action, kind, q, immediate, p_success, benefit, branches}`` where
    ``branches`` is a list of ``[observation, probability, child node id or null at the end]``.
    """
    scn = sol.scenario
    kinds = {a: x.kind for a, x in scn.actions.items()}
    cache: dict[
        tuple[int, tuple[str, ...]], tuple[np.ndarray, list[bool], list[tuple[int, float] | None]]
    ] = {}
    for n in sol.nodes:
        key = (n.stage, n.actions)
        if key not in cache:
            ca = sol.compiled.stages[n.stage - 1]
            zero = np.zeros(len(sol.compiled.prior))
            succ = np.stack([s if (s := ca[a].success) is not None else zero for a in n.actions], axis=1)
            has = [ca[a].success is not None for a in n.actions]
            bene: list[tuple[int, float] | None] = []
            for a in n.actions:
                cp = scn.actions[a].counterpart
                bene.append(
                    (n.actions.index(cp), scn.actions[a].fee - scn.actions[cp].fee)
                    if cp is not None and cp in n.actions
                    else None
                )
            cache[key] = (succ, has, bene)
        succ_m, has, bene = cache[key]
        p_succ = (n.belief @ succ_m).tolist()
        q = n.q.tolist()
        imm = n.imm.tolist()
        actions = []
        for i, a in enumerate(n.actions):
            obs, probs, kids = n.links[i]
            keep = probs > PROB_EPS
            b = bene[i]
            actions.append(
                {
                    "action": a,
                    "kind": kinds[a],
                    "q": q[i],
                    "immediate": imm[i],
                    "p_success": p_succ[i] if has[i] else None,
                    "benefit": None if b is None else q[b[0]] - (q[i] - b[1]),
                    "branches": [
                        [o, p, None if c < 0 else c]
                        for o, p, c, k in zip(obs, probs.tolist(), kids.tolist(), keep.tolist(), strict=True)
                        if k
                    ],
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
