"""Read ``predictions.csv`` from run directories into one validated table."""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analysis.rundirs import Discovery, RunDirError, discover_runs, read_table

PREDICTIONS = "predictions.csv"
REQUIRED = ("run_id", "game_type", "cluster", "model", "p", "outcome", "source")
OPTIONAL = ("agent", "memory", "schedule", "subject", "subject_kind", "game", "round", "p_exact", "item")


def load_predictions(
    paths: Iterable[str | os.PathLike[str]], *, include_incomplete: bool = False
) -> tuple[pd.DataFrame, Discovery]:
    """All prediction rows under the given run/sweep directories.

    The returned frame has every contract column (missing optional ones are added empty), ``p`` and
    ``p_exact`` as floats (NaN = missing), ``outcome`` as 0/1 floats, ``model`` = ``scripted:<agent>`` for offline agents (so
    different scripted forecasters are never pooled), ``cell:<key>`` columns for manifest cell keys, and ``cluster_key`` =
    ``run_id/cluster`` so clusters of different runs never merge (``cluster_id``: its integer code).

    Raises:
        RunDirError: when no run holds a predictions.csv, a required column is absent, or a value is invalid
            (out-of-range p, outcome not 0/1) — the message names the file column and the bad value.
    """
    found = dedupe_runs(discover_runs(paths, include_incomplete=include_incomplete))
    if not found.runs:
        why = found.report() or "no manifest.json found"
        raise RunDirError(f"no run directories to analyse ({why})")
    df = _read_with_cells(found)
    if df.empty:
        raise RunDirError(f"none of the {len(found.runs)} run(s) has a non-empty {PREDICTIONS}")
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise RunDirError(f"{PREDICTIONS} lacks required column(s) {missing}")
    for col in OPTIONAL:
        if col not in df.columns:
            df[col] = np.nan
    df["p"] = _numeric(df["p"], "p")
    df["p_exact"] = _numeric(df["p_exact"], "p_exact")
    for col in ("p", "p_exact"):
        bad = df[col].notna() & ((df[col] < 0) | (df[col] > 1))
        if bad.any():
            row = df.loc[bad].iloc[0]
            raise RunDirError(f"{PREDICTIONS} of run {row['run_id']}: {col}={row[col]} outside [0, 1]")
    outcome = pd.to_numeric(df["outcome"], errors="coerce")
    bad = ~outcome.isin([0, 1])
    if bad.any():
        row = df.loc[bad].iloc[0]
        raise RunDirError(f"{PREDICTIONS} of run {row['run_id']}: outcome={row['outcome']!r} is not 0 or 1")
    df["outcome"] = outcome.astype(float)
    for col in (
        "run_id",
        "game_type",
        "cluster",
        "model",
        "source",
        "agent",
        "memory",
        "schedule",
        "subject",
    ):
        df[col] = df[col].astype("string").fillna("")
    scripted = (df["model"] == "scripted") & (df["agent"] != "")
    df.loc[scripted, "model"] = "scripted:" + df.loc[scripted, "agent"]  # tell offline forecasters apart
    df["cluster_key"] = df["run_id"] + "/" + df["cluster"]
    df["cluster_id"] = pd.factorize(df["cluster_key"])[0]  # integer codes: fast grouping and resampling
    return df, found


def _read_with_cells(found: Discovery) -> pd.DataFrame:
    """predictions.csv of every run, plus the manifest cell keys the table lacks (e.g. ``temptation``,
    ``horizon``, ``partner_slot``) as ``cell:<key>`` columns."""
    frames = []
    for run in found.runs:
        df = read_table(run, PREDICTIONS, cell_keys=False)
        if df is None or df.empty:
            continue
        for key, value in run.cell.items():
            if key not in df.columns and isinstance(value, str | int | float | bool):
                df[f"cell:{key}"] = str(value)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def cell_columns(df: pd.DataFrame) -> list[str]:
    """The ``cell:<key>`` columns that take more than one value (settings a sweep varied)."""
    return [c for c in df.columns if c.startswith("cell:") and df[c].fillna("").nunique() > 1]


def dedupe_runs(found: Discovery) -> Discovery:
    """Keep the first run directory per ``run_id`` (run ids are deterministic: the same command re-run into a
    new directory is the same run); later copies are listed as excluded so nothing is counted twice."""
    seen: dict[str, str] = {}
    kept = []
    for run in found.runs:
        if run.run_id in seen:
            found.excluded.append((run.path, f"duplicate of run {run.run_id} at {seen[run.run_id]}"))
            continue
        seen[run.run_id] = str(run.path)
        kept.append(run)
    found.runs = kept
    return found


def _numeric(col: pd.Series, name: str) -> pd.Series:
    num = pd.to_numeric(col, errors="coerce")
    suspect = num.isna() & col.notna()
    if suspect.any():
        junk = suspect & (col.astype("string").str.strip() != "")
        if junk.any():
            raise RunDirError(f"{PREDICTIONS}: column {name} has non-numeric value {col[junk].iloc[0]!r}")
    return num.astype(float)
