"""Make a plan: load the measure's cells, keep the chosen ones, plan them, price them, write the files."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.escape_room.tables import markdown_table
from analysis.plan import report
from analysis.plan.cells import PlanCell, with_model
from analysis.plan.measures import MEASURES, load_cells
from analysis.plan.table import Target, compare_cells, plan_cells, rows_frame


class PlanError(ValueError):
    """The plan cannot be made as asked (the message says why)."""


@dataclass
class PlanResult:
    """The plan's tables and the text printed on stdout."""

    plan: pd.DataFrame
    pairs: pd.DataFrame | None
    printed: str
    plan_csv: Path


def select(cells: Sequence[PlanCell], where: Sequence[tuple[str, tuple[str, ...]]]) -> list[PlanCell]:
    """The cells (and the anchors they use) whose keys match every ``--where`` condition."""
    if not where:
        return list(cells)
    known = {k for c in cells for k in c.keys}
    for key, _ in where:
        if key not in known:
            raise PlanError(f"--where {key}=...: no such cell key (keys: {', '.join(sorted(known))})")
    kept = [c for c in cells if c.role == "cell" and all(c.keys.get(k) in vs for k, vs in where)]
    anchors = {id(c.anchor): c.anchor for c in kept if c.anchor is not None}
    if not kept:
        shown = " ".join(f"{k}={','.join(vs)}" for k, vs in where)
        raise PlanError(f"no cell matches --where {shown}")
    return kept + [a for a in anchors.values() if a is not None]


COST_COLUMNS = (
    "requests", "prompt_tokens", "completion_tokens", "cost_low", "cost_estimate", "cost_high", "cost_now_low",
    "cost_now_estimate", "cost_now_high",
)  # fmt: skip


def _price(frame: pd.DataFrame, cells: Sequence[PlanCell], model: str) -> pd.DataFrame:
    from analysis.plan.cost import Pricer, PricingError

    pricer = Pricer()
    records = []
    for row, cell in zip(frame.to_dict("records"), cells, strict=True):
        name = cell.model if model == "own" else model
        if not name:
            free = dict.fromkeys(COST_COLUMNS, 0.0)
            records.append({"priced_model": "", **free, "cost_note": "scripted agent: no LLM calls"})
            continue
        try:
            one = pricer.session(cell.overrides if model == "own" else with_model(cell.overrides, name))
        except PricingError as exc:
            raise PlanError(str(exc)) from exc
        runs = None if pd.isna(row["runs"]) else int(row["runs"])
        planned, now = one.times(runs), one.times(int(row["sessions_now"]))
        records.append(
            {
                "priced_model": name,
                "requests": planned["requests"],
                "prompt_tokens": planned["prompt_tokens"],
                "completion_tokens": planned["completion_tokens"],
                "cost_low": planned["cost_low"],
                "cost_estimate": planned["cost_estimate"],
                "cost_high": planned["cost_high"],
                "cost_now_low": now["cost_low"],
                "cost_now_estimate": now["cost_estimate"],
                "cost_now_high": now["cost_high"],
                "cost_note": "; ".join(one.prices),
            }
        )
    return pd.concat([frame.reset_index(drop=True), pd.DataFrame(records)], axis=1)


def make_plan(dirs: Sequence[str], args: argparse.Namespace) -> PlanResult:
    """The whole ``analysis plan`` command, files written under ``args.out``."""
    spec = MEASURES[args.measure]
    options: dict[str, object] = {
        "include_incomplete": args.include_incomplete,
        "n_resamples": args.resamples,
        "seed": args.seed,
        "level": args.level,
    }
    if args.measure.startswith("delta_"):
        options["anchor"] = args.anchor
    cells, warnings = load_cells(args.measure, dirs, **options)
    cells = select(cells, args.where)
    target = Target(args.width, args.level, args.assurance, args.effect, args.power)
    pairs_frame: pd.DataFrame | None = None
    if args.compare:
        if args.measure.startswith("delta_"):
            raise PlanError("--compare works on cell measures (volume, partner_share, ...), not on deltas")
        try:
            rows, pairs = compare_cells(
                cells, args.compare, target, n_resamples=args.resamples, seed=args.seed
            )
        except ValueError as exc:
            raise PlanError(str(exc)) from exc
        pairs_frame = pd.DataFrame(pairs)
    else:
        rows = plan_cells(cells, target)
    frame = rows_frame(rows, args.measure, target)
    keys = list(dict.fromkeys(k for r in rows for k in r.cell.keys))
    planned_cells = [r.cell for r in rows]
    if args.model:
        frame = _price(frame, planned_cells, args.model)
        if args.model != "own":
            frame["overrides"] = [shlex.join(with_model(c.overrides, args.model)) for c in planned_cells]
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    plan_csv = out / "plan.csv"
    frame.to_csv(plan_csv, index=False)
    if pairs_frame is not None:
        pairs_frame.to_csv(out / "comparisons.csv", index=False)
    sources = ", ".join(dirs)
    text = report.render(frame, pairs_frame, measure=args.measure, label=spec.label, target=target,
                         sources=sources, plan_csv=plan_csv, model=args.model, warnings=warnings,
                         keys=keys)  # fmt: skip
    (out / "plan.md").write_text(text, encoding="utf-8")
    printed = _printed(frame, pairs_frame, target, args, plan_csv, keys)
    return PlanResult(frame, pairs_frame, printed, plan_csv)


def _printed(
    frame: pd.DataFrame,
    pairs: pd.DataFrame | None,
    target: Target,
    args: argparse.Namespace,
    plan_csv: Path,
    keys: list[str],
) -> str:
    lines = [
        f"plan for {args.measure}: half-width {target.width:g} at {target.level:.0%}, assurance "
        f"{target.assurance:.0%}"
        + (f", power {target.power:.0%} for {target.effect:g}" if target.effect else ""),
        "",
    ]
    if pairs is not None:
        lines += [markdown_table(report.compare_frame(pairs)), ""]
    lines.append(markdown_table(report.display_frame(frame, args.model is not None, keys)))
    runs = pd.to_numeric(frame["runs"], errors="coerce")
    total = f"total {int(runs.sum(skipna=True)):,} sessions in {int(runs.notna().sum())} job(s)"
    if args.model:
        total += (
            f"; cost with {args.model} ≈ {report._money(frame['cost_estimate'].sum())} "
            f"({report._money(frame['cost_low'].sum())} to {report._money(frame['cost_high'].sum())})"
        )
    lines += [total, f"wrote {plan_csv} and {plan_csv.with_name('plan.md')} (method, assumptions)",
              f"run it: {report.sweep_command(plan_csv)}"]  # fmt: skip
    return "\n".join(lines)
