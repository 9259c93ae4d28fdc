"""Escape-room cells to plan: volume, partner share and the deltas against the memoryless anchor.

Units are games (D-correct games, as the measures count them); a session is ``run_id`` × ``session``.
Cells with memory resample sessions (``session`` design), memoryless cells resample games (``unit``).
Today's intervals are the trust analysis's own (:mod:`analysis.escape_room.measures`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analysis.escape_room.loader import TrustData, load_trust_data
from analysis.escape_room.measures import AnchorMode, anchor_cells, compute_cells, compute_deltas
from analysis.escape_room.published import published_anchor
from analysis.escape_room.schedules import SCHEDULE_ORDER
from analysis.escape_room.schema import CELL_KEYS
from analysis.plan.cells import PlanCell, common_overrides, no_interval
from analysis.plan.design import Units

RATIOS = {"volume": ("verifications", "one"), "partner_share": ("partner_verifications", "verifications")}
DELTAS = {"delta_trust": "volume", "delta_target": "partner_share"}
PRESETS = frozenset(SCHEDULE_ORDER)
"""Schedules with an experiment preset of the same name (``conf/experiment/<schedule>.yaml``)."""


def study_model(name: str) -> str:
    """The model config of a reference-study model (``gpt-5.4-mini-2026-03-17`` -> ``gpt-5.4-mini``):
    the study's models have configs named as their published anchors; other names are kept."""
    anchor = published_anchor(name)
    return anchor.model if anchor is not None else name


def reference_overrides(keys: dict[str, str]) -> tuple[str, ...]:
    """Overrides that run a reference-study cell in trustsim: its schedule's preset (or a custom pattern),
    the LLM agent on the study's model config, and its memory."""
    schedule = keys["schedule"]
    if schedule in PRESETS:
        out = [f"+experiment={schedule}"]
    else:
        pattern = schedule.split(":", 1)[-1]
        base = "anchor" if keys["memory"] == "none" else "smooth"
        out = [f"+experiment={base}", "schedule=custom", f"schedule.pattern={pattern}"]
    return (*out, "agent=llm", f"model={study_model(keys['model'])}", f"memory={keys['memory']}")


def _cell_overrides(data: TrustData, keys: dict[str, str]) -> tuple[tuple[str, ...], str]:
    runs = data.runs
    mask = np.ones(len(runs), dtype=bool)
    for k in CELL_KEYS:
        mask &= runs[k].fillna("").astype(str).to_numpy() == keys[k]
    mine = runs[mask]
    if len(mine) and (mine["source"] != "trustsim").all():
        return reference_overrides(keys), "the reference study's settings mapped onto trustsim's presets"
    experiment = keys["schedule"] if keys["schedule"] in PRESETS else "smooth"
    fallback = [f"+experiment={experiment}", f"agent={keys['agent']}", f"memory={keys['memory']}"]
    if keys["agent"] == "llm":
        fallback.append(f"model={keys['model']}")
    paths = mine.loc[mine["source"] == "trustsim", "path"]
    return common_overrides(paths, tuple(fallback), "rebuilt from the cell's keys (no .hydra/overrides.yaml)")


def _units(games: pd.DataFrame, measure: str, memoryless: bool) -> Units:
    num, den = RATIOS[measure]
    dc = games[games["d_correct"].astype(bool)]
    session = dc["run_id"].astype(str) + "#" + dc["session"].astype(str)
    values = dc.assign(one=1.0)
    return Units.of(session, values[num], values[den], "unit" if memoryless else "session")


def load_cells(
    paths: Iterable[str | os.PathLike[str]],
    measure: str,
    *,
    include_incomplete: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    anchor: AnchorMode = "auto",
) -> tuple[list[PlanCell], list[str]]:
    """The cells of ``measure`` (``volume``, ``partner_share``, ``delta_trust``, ``delta_target``) and the
    data's warnings."""
    data = load_trust_data(paths, include_incomplete=include_incomplete)
    cells = compute_cells(data, n_resamples=n_resamples, seed=seed, level=level)
    games = data.games
    base = DELTAS.get(measure, measure)
    by_keys = {tuple(c.keys[k] for k in CELL_KEYS): c for c in cells}
    groups = dict(iter(games.groupby(list(CELL_KEYS), sort=False)))
    out: dict[tuple[str, ...], PlanCell] = {}
    for key, result in by_keys.items():
        keys = dict(result.keys)
        g = groups[key]
        overrides, note = _cell_overrides(data, keys)
        out[key] = PlanCell(
            keys=keys,
            units=_units(g, base, keys["memory"] == "none"),
            current=result.measures.get(base, no_interval("not computed")),
            overrides=overrides,
            overrides_note=note,
            model=study_model(keys["model"]) if keys["agent"] == "llm" else "",
        )
    warnings = [*data.problems]
    if measure not in DELTAS:
        return list(out.values()), warnings
    anchors = anchor_cells(data, cells, mode=anchor, n_resamples=n_resamples, seed=seed, level=level)
    deltas = {
        tuple(d.keys[k] for k in CELL_KEYS): d
        for d in compute_deltas(cells, anchors, level)
        if d.measure == measure
    }
    planned: list[PlanCell] = []
    anchor_plans: dict[tuple[str, str, str], PlanCell] = {}
    for key, cell in out.items():
        if cell.keys["memory"] == "none":
            continue
        who = (cell.keys["model"], cell.keys["agent"], cell.keys["partner_slot"])
        delta = deltas.get(key)
        cell.current = delta.interval if delta is not None else no_interval("no anchor for this model")
        source = anchors.get(who)
        if source is None:
            cell.anchor_note = "no anchor: the delta does not exist (memoryless runs or --anchor published)"
        elif source.source.startswith("published"):
            cell.anchor_note = f"{source.source}: a point value, its uncertainty not counted"
        else:
            if who not in anchor_plans:
                anchor_plans[who] = _anchor_cell(games, out, who, base)
            cell.anchor = anchor_plans[who]
            cell.anchor_note = source.source
        planned.append(cell)
    return planned + list(anchor_plans.values()), warnings


def _anchor_cell(
    games: pd.DataFrame, cells: dict[tuple[str, ...], PlanCell], who: tuple[str, str, str], measure: str
) -> PlanCell:
    """The memoryless D-correct games of (model, agent, partner slot), pooled over memoryless schedules, as
    the trust analysis pools them; run again as the memoryless cell with the most games."""
    model, agent, slot = who
    mem = games[(games["memory"] == "none") & (games["model"] == model) & (games["agent"] == agent)
                & (games["partner_slot"] == slot)]  # fmt: skip
    members = [c for c in cells.values() if c.keys["memory"] == "none"
               and (c.keys["model"], c.keys["agent"], c.keys["partner_slot"]) == who]  # fmt: skip
    biggest = max(members, key=lambda c: c.units.session.size)
    keys = {**biggest.keys, "schedule": "anchor(pooled)" if len(members) > 1 else biggest.keys["schedule"]}
    return PlanCell(
        keys=keys,
        units=_units(mem, measure, True),
        current=biggest.current if len(members) == 1 else no_interval("pooled anchor"),
        overrides=biggest.overrides,
        overrides_note=biggest.overrides_note,
        model=biggest.model,
        role="anchor",
    )
