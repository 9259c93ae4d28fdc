"""``plan.md`` and the printed plan: the table, the method in a paragraph, its assumptions, the command."""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

import pandas as pd
from scipy.stats import f

from analysis.escape_room.tables import markdown_table
from analysis.plan.table import Target

METHOD = (
    "Method: every measure is a ratio of sums over a cell's units (games, pairs, matches, blueprints). "
    "Per cell the pilot gives the between-session variance σ²_b and the within-session (unit-to-unit) "
    "variance σ²_w (one-way ANOVA on the units' linearised residuals), and g units per session; with the "
    "session as the resampling cluster, Var(estimate) = (σ²_b + σ²_w/g)/n for n sessions (estimated from the "
    "sessions' totals, k − 1 degrees of freedom); with the unit as the cluster (memoryless games, pairs, "
    "matches) it is σ²_t/(n·g). The plan is the smallest n whose half-width z·√Var(n) is at most W with "
    "probability `assurance` under normal theory: the pilot's variance is scaled by the F quantile with the "
    "final study's and the pilot's degrees of freedom (so it covers the noise of both). `sessions expected` "
    "takes the pilot's variance at face value (the half-width is W on average, reached about half the time). "
    "Power (`--effect`): n with (z₁₋α/₂ + z_power)²·Var(n) ≤ effect², the variance at its upper "
    "`assurance` confidence bound."
)
ASSUMPTIONS = (
    "Assumptions: sessions (clusters) are independent; the pilot is representative of the study (same "
    "model, settings and schedule; a pilot that misses rare kinds of sessions underestimates the variance); "
    "the estimate is near normal at the planned size (the percentile bootstrap is what the analyses report)."
)


def pilot_factors(assurance: float, pilots: tuple[int, ...] = (5, 10, 20), final: int = 30) -> str:
    """How much the assurance asks beyond the face-value plan for pilots of a few sizes (session design, a
    study of about ``final`` sessions)."""
    parts = [f"{k} sessions ×{f.ppf(assurance, final - 1, k - 1):.1f}" for k in pilots]
    return (
        f"Small pilots give large assured plans: at assurance {assurance:.0%} the pilot's variance is scaled by "
        f"about {', '.join(parts)} (a study of ~{final} sessions)."
    )


def _num(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _money(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "—"
    v = float(value)
    return f"${v:,.2f}" if v >= 0.01 or v == 0 else f"${v:.4f}"


def _sd(var: Any) -> str:
    if var is None or var is pd.NA or (isinstance(var, float) and math.isnan(var)):
        return "—"
    v = float(var)
    return f"{math.sqrt(v):.3f}" if v >= 0 else f"<0 ({v:.3g})"


def cell_names(plan: pd.DataFrame, keys: list[str]) -> list[str]:
    """Each row's cell named by the keys that tell the rows apart (always the first key, e.g. the model)."""
    shown = [k for i, k in enumerate(keys) if k in plan and (i == 0 or plan[k].astype(str).nunique() > 1)]
    names = []
    for r in plan.to_dict("records"):
        parts = [str(r[k]) for k in shown if str(r[k]) not in ("", "nan")]
        if r.get("model") == "scripted" and "agent" not in shown:  # an offline agent: name it, not "scripted"
            parts = [str(r["agent"]) if p == "scripted" else p for p in parts]
        names.append(" / ".join(parts))
    return names


def display_frame(plan: pd.DataFrame, priced: bool, keys: list[str]) -> pd.DataFrame:
    """The columns a reader needs, formatted (cells named by the ``keys`` that differ between rows)."""
    rows = []
    for r, name in zip(plan.to_dict("records"), cell_names(plan, keys), strict=True):
        est = _num(r["estimate"])
        interval = f"{est} [{_num(r['low'])}, {_num(r['high'])}]" if math.isfinite(r["low"]) else est
        row = {
            "cell": name + (" (anchor)" if r["role"] == "anchor" else ""),
            "estimate [interval]": interval,
            "half-width now": f"{_num(r['half_width_now'])} ({r['sessions_now']} sessions)",
            "σ_b / σ_w / g": f"{_sd(r['between_var'])} / {_sd(r['within_var'])} / {_num(r['units_per_session'], 1)}",
            "sessions (expected)": f"{_num(r['sessions'])} ({_num(r['sessions_expected'])})",
        }
        if "sessions_power" in r:
            row["sessions for power (expected)"] = (
                f"{_num(r['sessions_power'])} ({_num(r['sessions_power_expected'])})"
            )
        row["runs"] = _num(r["runs"])
        if priced:
            tokens = (r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0)
            row["requests, tokens"] = (
                f"{r['requests']:,.0f}, {tokens / 1e6:,.1f} M"
                if math.isfinite(r["requests"] or math.nan)
                else "—"
            )
            row["cost (low–high)"] = (
                f"{_money(r['cost_estimate'])} ({_money(r['cost_low'])}–{_money(r['cost_high'])})"
            )
        notes = [
            n for x in (r.get("plan_note"), r.get("cell_note")) if isinstance(x, str) for n in x.split("; ")
        ]
        row["note"] = "; ".join(dict.fromkeys(n for n in notes if n))
        rows.append(row)
    return pd.DataFrame(rows)


def compare_frame(pairs: pd.DataFrame) -> pd.DataFrame:
    """The compared pairs, formatted."""
    rows = []
    for r in pairs.to_dict("records"):
        row = {
            "pair": f"{r['a']} − {r['b']}",
            "difference [interval]": f"{_num(r['difference'])} [{_num(r['low'])}, {_num(r['high'])}]",
            "half-width now": _num(r["half_width_now"]),
            "sessions per cell (expected)": f"{_num(r['sessions'])} ({_num(r['sessions_expected'])})",
        }
        if "sessions_power" in r:
            row["per cell for power (expected)"] = (
                f"{_num(r['sessions_power'])} ({_num(r['sessions_power_expected'])})"
            )
        row["note"] = r.get("plan_note") or ""
        rows.append(row)
    return pd.DataFrame(rows)


def sweep_command(plan_csv: Path) -> str:
    """The multirun that runs the plan (each cell's job with its ``runs``)."""
    return f"python -m trustsim -m +plan={shlex.quote(str(plan_csv))}"


def render(
    plan: pd.DataFrame,
    pairs: pd.DataFrame | None,
    *,
    measure: str,
    label: str,
    target: Target,
    sources: str,
    plan_csv: Path,
    model: str | None,
    warnings: list[str],
    keys: list[str],
) -> str:
    """The Markdown text of ``plan.md``."""
    priced = model is not None
    power = f"; power {target.power:.0%} to detect a difference of {target.effect:g}" if target.effect else ""
    lines = [
        f"# Study plan: {measure}",
        "",
        f"Measure: {label}. Target: half-width {target.width:g} of the {target.level:.0%} interval, with "
        f"assurance {target.assurance:.0%}{power}. Variance from: {sources}.",
        "",
        METHOD,
        "",
        ASSUMPTIONS + " " + pilot_factors(target.assurance),
        "",
    ]
    if pairs is not None and len(pairs):
        lines += ["## Compared pairs", "", markdown_table(compare_frame(pairs)), ""]
    lines += ["## Cells", "", markdown_table(display_frame(plan, priced, keys)), ""]
    origins = plan["overrides_note"].fillna("").astype(str)
    for origin in dict.fromkeys(o for o in origins if o):
        lines.append(f"Jobs' overrides ({int((origins == origin).sum())} cell(s)): {origin}.")
    runs = pd.to_numeric(plan["runs"], errors="coerce")
    lines.append(
        f"Total: {int(runs.sum(skipna=True)):,} sessions over {int(runs.notna().sum())} job(s)"
        + (
            f"; {int(runs.isna().sum())} cell(s) without a plan (see their notes)"
            if runs.isna().any()
            else ""
        )
        + "."
    )
    if priced:
        lines.append(
            f"Cost with {model}: {_money(plan['cost_estimate'].sum())} "
            f"(range {_money(plan['cost_low'].sum())} to {_money(plan['cost_high'].sum())}); the data as "
            f"they are (sessions now) cost {_money(plan['cost_now_estimate'].sum())} "
            f"({_money(plan['cost_now_low'].sum())} to {_money(plan['cost_now_high'].sum())}). "
            "Each job is previewed for one session and scaled; answers already in the request store are "
            "not subtracted."
        )
    lines += [
        "",
        "## Run it",
        "",
        "```bash",
        sweep_command(plan_csv) + "                 # every cell's job with its runs",
        sweep_command(plan_csv) + " preview=true    # what it would ask and cost (stored answers free)",
        "```",
        "",
        "Add any other override (e.g. `seed=1`, `llm.store_dir=...`, a launcher) to the command. Cells "
        "without a plan are skipped, with a message. With the pilot's seed the pilot's sessions are the "
        "study's first ones (their answers come from the request store); analyse the study's sweep alone.",
        "",
    ]
    if warnings:
        lines += ["## Data warnings", "", *[f"- {w}" for w in warnings], ""]
    lines += [
        "Files: `plan.csv` (every column), `plan.md`" + (", `comparisons.csv`." if pairs is not None else ".")
    ]
    return "\n".join(lines) + "\n"
