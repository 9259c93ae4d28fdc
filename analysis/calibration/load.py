"""Read ``predictions.csv`` from run directories into one validated table."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analysis.rundirs import DataWarning, Discovery, RunDirError, discover_runs, read_table, usable_rows

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
    paths = list(paths)
    found = discover_runs(paths, include_incomplete=include_incomplete)  # duplicates counted once
    if not found.runs:
        why = found.report() or "no manifest.json found"
        where = ", ".join(map(str, paths))
        raise RunDirError(f"no run directories to analyse in {where} ({why})")
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
    df["model"] = df["model"].map(model_label).astype("string")
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
        try:
            df = read_table(run, PREDICTIONS, cell_keys=False)
        except RunDirError as exc:  # the damage rule: warn, skip this run's table, go on
            warnings.warn(f"{exc}; skipped it", DataWarning, stacklevel=2)
            continue
        if df is None or df.empty:
            continue
        df = usable_rows(run, PREDICTIONS, df)
        for key, value in run.cell.items():
            if key not in df.columns and isinstance(value, str | int | float | bool):
                df[f"cell:{key}"] = str(value)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


PROVIDERS = frozenset((
    "openai", "anthropic", "gemini", "google", "vertex_ai", "vertex_ai_beta", "azure", "azure_ai", "bedrock",
    "mistral", "groq", "together_ai", "deepseek", "openrouter", "xai", "cohere", "fireworks_ai", "ollama",
    "ollama_chat", "hosted_vllm", "vllm", "huggingface", "trustsim", "local",
))  # fmt: skip
"""Provider prefixes removed from model labels (litellm ``provider/model`` ids, reference ``provider:model``)."""


def model_label(model: object) -> str:
    """The model's name without a provider prefix: ``anthropic:claude-opus-4-6`` and
    ``openai/gpt-5.1`` become ``claude-opus-4-6`` and ``gpt-5.1``; other labels are kept as they are."""
    text = "" if model is None or (isinstance(model, float) and np.isnan(model)) else str(model)
    for sep in ("/", ":"):
        head, found, tail = text.partition(sep)
        if found and tail and head.strip().lower() in PROVIDERS:
            return model_label(tail)
    return text


def cell_columns(df: pd.DataFrame) -> list[str]:
    """The ``cell:<key>`` columns that take more than one value (settings a sweep varied)."""
    return [c for c in df.columns if c.startswith("cell:") and df[c].fillna("").nunique() > 1]


def _numeric(col: pd.Series, name: str) -> pd.Series:
    num = pd.to_numeric(col, errors="coerce")
    suspect = num.isna() & col.notna()
    if suspect.any():
        junk = suspect & (col.astype("string").str.strip() != "")
        if junk.any():
            raise RunDirError(f"{PREDICTIONS}: column {name} has non-numeric value {col[junk].iloc[0]!r}")
    return num.astype(float)
