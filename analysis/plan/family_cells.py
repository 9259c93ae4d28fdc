"""Cells to plan in the other families: trust game, arena, reliance and calibration (Brier).

Each measure is a ratio of sums over units, grouped into cells as the family's analysis groups them, with the
family's resampling cluster:

- trust game (``sent_share`` = mean s/E, ``returned_share`` = Σr / Σk·s over exchanges with s > 0): unit and
  cluster = a pair (its whole repeated play); cells = trustor × trustee (agent and model) × the settings that vary;
- arena (``cooperation`` = the player's C moves / rounds): unit and cluster = a match; cells = player × model ×
  opponent × the match settings that vary;
- reliance (``accuracy`` = blueprint-macro share of optimal decisions, ``regret`` = pooled normalised regret):
  the cluster is the blueprint, replayed in every session (``item`` design: more sessions cannot narrow the
  interval below what the blueprints allow); cells = the system (the model, or the scripted agent);
- calibration (``brier`` = mean (p − y)² of stated probabilities): the cluster of ``predictions.csv`` (a
  session, a match or a pair); cells = confidence source × game × model.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from analysis.plan import clusters
from analysis.plan.cells import PlanCell, common_overrides
from analysis.plan.design import Design, Units
from analysis.rundirs import Discovery, RunDirError, discover_runs, read_tables

MeasureRows = Callable[[pd.DataFrame], tuple[pd.Series, pd.Series]]


def _paths_by_run(found: Discovery) -> dict[str, list[Path]]:
    paths: dict[str, list[Path]] = defaultdict(list)
    for run in found.runs:
        paths[str(run.run_id)].append(run.path)
    return paths


def _experiments(found: Discovery) -> dict[str, str]:
    return {
        str(r.run_id): str(r.manifest.get("experiment") or r.manifest.get("config", {}).get("name") or "")
        for r in found.runs
    }


def _build(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    found: Discovery,
    design: Design,
    unit: Sequence[str],
    num: str,
    den: str,
    item: str | None = None,
    model_of: Callable[[dict[str, str]], str],
    n_resamples: int,
    seed: int,
    level: float,
) -> list[PlanCell]:
    """Cells of ``frame`` (one row per unit, with ``run_id``, ``session``, ``num``, ``den``)."""
    paths = _paths_by_run(found)
    experiments = _experiments(found)
    out = []
    for values, g in frame.groupby(list(keys), sort=True, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        cell_keys = {k: "" if pd.isna(v) else str(v) for k, v in zip(keys, values, strict=True)}
        sums = g.groupby([*unit], sort=True, dropna=False).agg(
            run_id=("run_id", "first"), session=("session", "first"), num=(num, "sum"), den=(den, "sum"),
            **({"item": (item, "first")} if item else {}),
        )  # fmt: skip
        session = sums["run_id"].astype(str) + "#" + sums["session"].astype(str)
        units = Units.of(session, sums["num"], sums["den"], design, sums["item"] if item else None)
        rng = np.random.default_rng([seed, zlib.crc32("|".join(cell_keys.values()).encode())])
        run_ids = sorted(set(g["run_id"].astype(str)))
        experiment = next((experiments[r] for r in run_ids if experiments.get(r)), "")
        fallback = (f"+experiment={experiment}",) if experiment else ()
        overrides, note = common_overrides(
            [p for r in run_ids for p in paths.get(r, [])],
            fallback,
            "rebuilt from the manifest's experiment name",
        )
        out.append(
            PlanCell(
                keys=cell_keys,
                units=units,
                current=clusters.interval(units, n_resamples=n_resamples, seed=rng, level=level),
                overrides=overrides,
                overrides_note=note,
                model=model_of(cell_keys),
            )
        )
    return out


def _discover(
    paths: Sequence[str], game: str, table: str, include_incomplete: bool
) -> tuple[pd.DataFrame, Discovery]:
    found = discover_runs(paths, include_incomplete=include_incomplete, game=game)
    if not found.runs:
        raise RunDirError(
            f"no {game} run directories in {', '.join(map(str, paths))} ({found.report() or 'none found'})"
        )
    df = read_tables(found.runs, table, cell_keys=False)
    if df.empty:
        raise RunDirError(f"none of the {game} runs has a non-empty {table}")
    return df, found


def _llm_model(model: str) -> str:
    return "" if model in ("", "scripted") or model.startswith("scripted:") else model


def trust_game_cells(
    paths: Sequence[str], measure: str, **options: object
) -> tuple[list[PlanCell], list[str]]:
    """``sent_share`` and ``returned_share`` per trustor × trustee (× varying settings)."""
    from analysis.trust_game.measures import GROUP_COLUMNS, SETTING_COLUMNS, check_exchanges

    df, found = _discover(paths, "trust_game", "exchanges.csv", bool(options.get("include_incomplete")))
    df = check_exchanges(df)
    keys = [*GROUP_COLUMNS, *(c for c in SETTING_COLUMNS if c in df and df[c].nunique() > 1)]
    if measure == "sent_share":
        df = df.assign(num=df["sent_fraction"], den=1.0)
    else:
        sent = df["sent"] > 0
        df = df.assign(num=df["returned"].where(sent, 0.0), den=df["kS"].where(sent, 0.0))
    cells = _build(df, keys, found=found, design="unit", unit=["cluster"], num="num", den="den",
                   model_of=lambda k: _llm_model(k.get("trustor_model", "")) or _llm_model(k.get("trustee_model", "")),
                   **_stats(options))  # fmt: skip
    return cells, []


def arena_cells(paths: Sequence[str], measure: str, **options: object) -> tuple[list[PlanCell], list[str]]:
    """``cooperation`` per player × model × opponent (× varying match settings); cluster = match."""
    from analysis.arena.measures import CELL_COLUMNS, check_moves

    df, found = _discover(paths, "arena", "moves.csv", bool(options.get("include_incomplete")))
    df = check_moves(df)
    df = df.assign(num=df["move"].eq("C").astype(float), den=1.0, match_key=df["run_id"] + "/" + df["match"])
    keys = ["player", "model", "opponent", *(c for c in CELL_COLUMNS if c in df and df[c].nunique() > 1)]
    cells = _build(df, keys, found=found, design="unit", unit=["match_key"], num="num", den="den",
                   model_of=lambda k: _llm_model(k.get("model", "")), **_stats(options))  # fmt: skip
    return cells, []


def reliance_cells(paths: Sequence[str], measure: str, **options: object) -> tuple[list[PlanCell], list[str]]:
    """``accuracy`` (blueprint macro) and ``regret`` per system; cluster = blueprint (fixed items)."""
    from analysis.reliance.load import load
    from analysis.reliance.metrics import main_decisions

    data = load(paths, include_incomplete=bool(options.get("include_incomplete")))
    dec = main_decisions(data.stages)
    if dec.empty:
        raise RunDirError("the reliance runs hold no decision of the main benchmark")
    if measure == "accuracy":
        per = dec.groupby(["system", "run_id", "session", "blueprint"], sort=True).agg(
            optimal=("optimal", "sum"), decisions=("optimal", "size"), agent=("agent", "first"), model=("model", "first")
        )  # fmt: skip
        per = per.reset_index().assign(num=lambda d: d["optimal"].astype(float) / d["decisions"], den=1.0)
    else:
        ok = dec["valid"].astype(bool) & (dec["value_range"] > 1e-9) & dec["regret"].notna()
        work = dec.assign(num=dec["regret"].where(ok, 0.0).astype(float), den=ok.astype(float))
        per = (
            work.groupby(["system", "run_id", "session", "blueprint"], sort=True)
            .agg(num=("num", "sum"), den=("den", "sum"), agent=("agent", "first"), model=("model", "first"))
            .reset_index()
        )
    per["unit"] = (
        per["run_id"].astype(str) + "#" + per["session"].astype(str) + "#" + per["blueprint"].astype(str)
    )
    found = data.discovery
    cells = _build(per, ["system"], found=found, design="item", unit=["unit"], num="num", den="den", item="blueprint",
                   model_of=lambda k: _llm_model(k["system"]) if k["system"] not in set(per["agent"]) else "",
                   **_stats(options))  # fmt: skip
    return cells, []


SESSION_CLUSTER = re.compile(r"^s(\d+)$")
SESSION_PREFIX = re.compile(r"^s(\d+)")


def calibration_cells(
    paths: Sequence[str], measure: str, **options: object
) -> tuple[list[PlanCell], list[str]]:
    """``brier`` per confidence source × game × model; the cluster of predictions.csv (session, match or pair)."""
    from analysis.calibration.load import load_predictions

    df, found = load_predictions(paths, include_incomplete=bool(options.get("include_incomplete")))
    df = df[df["p"].notna()]
    if df.empty:
        raise RunDirError("no stated probability in predictions.csv")
    cluster = df["cluster"].astype(str)
    session = cluster.str.extract(SESSION_PREFIX, expand=False).fillna(cluster)
    df = df.assign(session=session, num=(df["p"] - df["outcome"]) ** 2, den=1.0)
    out: list[PlanCell] = []
    for by_session, part in df.groupby(cluster.str.fullmatch(SESSION_CLUSTER.pattern), sort=True):
        design: Design = "session" if by_session else "unit"
        unit = ["cluster_key", "game", "round"] if by_session else ["cluster_key"]
        part = part.assign(game=part["game"].fillna(""), round=part["round"].fillna(""))
        out += _build(part, ["model", "game_type", "source"], found=found, design=design, unit=unit, num="num",
                      den="den", model_of=lambda k: _llm_model(k["model"]), **_stats(options))  # fmt: skip
    return out, []


class _Stats(TypedDict):
    n_resamples: int
    seed: int
    level: float


def _stats(options: Mapping[str, Any]) -> _Stats:
    return {
        "n_resamples": int(options.get("n_resamples", 2000)),
        "seed": int(options.get("seed", 0)),
        "level": float(options.get("level", 0.95)),
    }


LOADERS = {
    "sent_share": trust_game_cells,
    "returned_share": trust_game_cells,
    "cooperation": arena_cells,
    "accuracy": reliance_cells,
    "regret": reliance_cells,
    "brier": calibration_cells,
}


def load_cells(paths: Sequence[str], measure: str, **options: object) -> tuple[list[PlanCell], list[str]]:
    """The cells of ``measure`` (one of :data:`LOADERS`)."""
    return LOADERS[measure](paths, measure, **options)
