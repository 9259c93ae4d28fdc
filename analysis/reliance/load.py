"""Read reliance run directories into decision and scenario tables."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from analysis.rundirs import Discovery, RunDirError, discover_runs, read_tables

STAGE_REQUIRED = (
    "set", "scenario", "blueprint", "category", "process", "stage", "history", "agent", "model",
    "show_posterior", "action", "valid", "optimal", "regret", "value_range",
)  # fmt: skip
BOOL_COLUMNS = (
    "valid", "optimal", "myopic", "learning_pays", "is_test", "zero_benefit_test", "useful_test_available",
    "support_optimal", "support_target_wrong", "protective", "protective_optimal", "show_posterior",
    "pair_stable", "all_optimal", "error",
)  # fmt: skip


@dataclass
class RelianceData:
    """Every decision (``stages``) and conversation (``scenarios``) of the runs, with a ``system`` label."""

    stages: pd.DataFrame
    scenarios: pd.DataFrame
    discovery: Discovery


def _bools(df: pd.DataFrame) -> pd.DataFrame:
    for c in BOOL_COLUMNS:
        if c in df.columns and df[c].dtype != bool:
            df[c] = df[c].map({True: True, False: False, "true": True, "false": False}).astype("boolean")
    return df


def system_label(agent: str, model: str) -> str:
    """LLM runs are named by model, scripted ones by agent."""
    return str(model) if str(agent) == "llm" else str(agent)


def load(paths: Iterable[str | os.PathLike[str]], include_incomplete: bool = False) -> RelianceData:
    """Discover reliance runs under ``paths`` and read their tables.

    Raises:
        RunDirError: When no reliance run is found or a table lacks required columns.
    """
    paths = list(paths)
    disc = discover_runs(paths, include_incomplete=include_incomplete, game="reliance")
    if not disc.runs:
        reasons = "; ".join(f"{p}: {why}" for p, why in disc.excluded[:5]) or "no manifest.json found"
        where = ", ".join(map(str, paths))
        raise RunDirError(f"no complete reliance run directory in {where} ({reasons})")
    stages = read_tables(disc.runs, "stages.csv", cell_keys=False)
    scenarios = read_tables(disc.runs, "scenarios.csv", cell_keys=False)
    if stages.empty:
        raise RunDirError("the reliance runs contain no decisions (stages.csv is empty or missing)")
    missing = [c for c in STAGE_REQUIRED if c not in stages.columns]
    if missing:
        raise RunDirError(f"stages.csv lacks required columns {missing}")
    for df in (stages, scenarios):
        _bools(df)
        if not df.empty:
            df["system"] = [system_label(a, m) for a, m in zip(df["agent"], df["model"], strict=True)]
    return RelianceData(stages, scenarios, disc)
