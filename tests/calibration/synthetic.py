"""Synthetic run directories with predictions.csv files (escape room, reliance, arena)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def write_run(
    root: Path, run_id: str, game: str, rows: list[dict], status: str = "complete", cell: dict | None = None
) -> Path:
    """Write a minimal run directory (manifest + predictions.csv)."""
    d = root / run_id
    d.mkdir(parents=True)
    manifest = {"run_id": run_id, "game": game, "status": status, "cell": cell or {}}
    (d / "manifest.json").write_text(json.dumps(manifest))
    pd.DataFrame(rows).to_csv(d / "predictions.csv", index=False)
    return d


def escape_rows(run_id: str, rng: np.random.Generator, n_sessions: int = 4, model: str = "m1") -> list[dict]:
    rows = []
    for s in range(n_sessions):
        for game in range(1, 6):
            d_correct = game != 2
            for rnd in range(1, 3):
                for _seat in "ABC":
                    for k in range(1, 5):
                        owner = "ABCD"[k - 1]
                        correct = d_correct if owner == "D" else True
                        p = float(np.round(rng.uniform(0.5, 1.0), 2)) if rng.uniform() > 0.1 else None
                        rows.append(
                            {
                                "run_id": run_id,
                                "game_type": "escape_room",
                                "cluster": f"s{s}",
                                "model": model,
                                "agent": "llm",
                                "memory": "transcript",
                                "schedule": "2strike",
                                "subject": owner,
                                "subject_kind": "scripted_partner" if owner == "D" else "agent",
                                "game": game,
                                "round": rnd,
                                "p": p,
                                "outcome": int(correct),
                                "p_exact": None,
                                "source": "native",
                                "item": f"Q{k}:Q{k}-{owner}",
                            }
                        )
    return rows


def reliance_rows(run_id: str, rng: np.random.Generator, n_sessions: int = 5) -> list[dict]:
    rows = []
    for s in range(n_sessions):
        for scen in range(1, 21):
            post = float(rng.uniform(0.1, 0.9))
            rows.append(
                {
                    "run_id": run_id,
                    "game_type": "reliance",
                    "cluster": f"s{s}",
                    "model": "m1",
                    "agent": "llm",
                    "subject": "tool",
                    "subject_kind": "channel",
                    "game": scen,
                    "round": 2,
                    "p": round(min(1.0, post + 0.1), 2),
                    "outcome": int(rng.uniform() < post),
                    "p_exact": post,
                    "source": "native",
                }
            )
    return rows


def arena_rows(run_id: str, rng: np.random.Generator, n_matches: int = 6, rounds: int = 20) -> list[dict]:
    rows = []
    for m in range(n_matches):
        opp = ["tit_for_tat", "always_defect"][m % 2]
        for r in range(1, rounds + 1):
            coop = opp == "tit_for_tat" and rng.uniform() < 0.9
            rows.append(
                {
                    "run_id": run_id,
                    "game_type": "arena",
                    "cluster": f"m{m}",
                    "model": "m2",
                    "agent": "llm",
                    "subject": opp,
                    "subject_kind": "opponent",
                    "game": m + 1,
                    "round": r,
                    "p": 0.5,
                    "outcome": int(coop),
                    "source": "native",
                }
            )
    return rows
