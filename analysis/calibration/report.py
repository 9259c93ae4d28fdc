"""Build the calibration report directory: tables (CSV + Markdown), figures (PNG + PDF) and report.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.calibration import figures
from analysis.calibration.load import cell_columns, load_predictions
from analysis.calibration.recalibrate import fold_plan
from analysis.calibration.tables import (
    BASE_KEYS,
    BREAKDOWNS,
    MIN_RECALIBRATION_PAIRS,
    Settings,
    measure_table,
    reliability_table,
)
from analysis.cli_options import CommonOptions
from analysis.outputs import write_table
from analysis.rundirs import RunDirError
from analysis.text import md_table, row_interval

MAX_EXACT_DISTINCT = 101  # analysis.calibration.intervals.murphy_groups: exact grouping up to this many p


def _round_bins(rounds: pd.Series, max_groups: int) -> pd.Series:
    """Long matches: rounds grouped into at most ``min(10, max_groups)`` equal-width ranges like ``021-040``."""
    r = pd.to_numeric(rounds, errors="coerce")
    top = int(r.max())
    width = -(-top // min(10, max_groups))
    lo = ((r - 1) // width) * width + 1
    digits = len(str(top))
    labels = (
        lo.astype("Int64").astype("string").str.zfill(digits)
        + "-"
        + (lo + width - 1).clip(upper=top).astype("Int64").astype("string").str.zfill(digits)
    )
    return labels.fillna("")


def _natural_key(value: object) -> tuple[int, float, str]:
    """Numbers by value (``2`` before ``10``), then text; empty last."""
    text = (
        ""
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
        else str(value)
    )
    try:
        return (0, float(text), "")
    except ValueError:
        return (1 if text else 2, 0.0, text)


def in_natural_order(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``table`` sorted by ``keys`` with numeric levels (game, round) in numeric order, not as text."""
    if table.empty:
        return table
    order = sorted(range(len(table)), key=lambda i: tuple(_natural_key(table[k].iloc[i]) for k in keys))
    return table.iloc[order].reset_index(drop=True)


@dataclass(frozen=True)
class CalibrationOptions(CommonOptions):
    """The options of ``python -m analysis calibration`` (its flags) that the computation reads."""

    resamples: int = 1000
    bins: int = 10
    folds: int = 5
    max_groups: int = 100
    source: list[str] | None = None

    @property
    def settings(self) -> Settings:
        """The settings every table is computed with."""
        return Settings(self.bins, self.resamples, self.seed, self.level, self.folds, self.max_groups)


@dataclass
class Calibration:
    """Every table of the calibration report, and what the report says about its input."""

    summary: pd.DataFrame  # with ``distinct_p`` (the Murphy section's grouping; not a column of summary.csv)
    breakdowns: dict[str, pd.DataFrame]
    bins: pd.DataFrame
    settings: Settings
    skipped: list[str] = field(default_factory=list)
    excluded: str = ""
    rows: int = 0
    stated: int = 0
    runs: int = 0

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The CSV tables: ``summary``, ``by_<breakdown>``, ``reliability``."""
        return {
            "summary": self.summary.drop(columns=["distinct_p"], errors="ignore"),
            **{f"by_{name}": table for name, table in self.breakdowns.items()},
            "reliability": self.bins,
        }


def compute(paths: list[str], options: CalibrationOptions) -> Calibration:
    """Load the prediction rows under ``paths`` and compute every table."""
    if options.folds < 2 or options.max_groups < 1:
        raise ValueError("need --folds >= 2 and --max-groups >= 1")
    df, found = load_predictions(paths, include_incomplete=options.include_incomplete)
    if options.source:
        df = df[df["source"].isin(options.source)]
        if df.empty:
            raise RunDirError(f"no predictions with source in {options.source}")
    result = calibrate(df, options.settings, found.report())
    result.rows, result.stated, result.runs = len(df), int(df["p"].notna().sum()), len(found.runs)
    return result


def calibrate(df: pd.DataFrame, settings: Settings, excluded: str = "") -> Calibration:
    """Every table for the prediction rows ``df``."""
    summary = measure_table(df, BASE_KEYS, settings, recalibrate=True)
    distinct = df[df["p"].notna()].groupby(list(BASE_KEYS), sort=True, dropna=False)["p"].nunique()
    if not summary.empty:
        summary["distinct_p"] = [
            int(distinct.get(tuple(r[k] for k in BASE_KEYS), 0)) for _, r in summary.iterrows()
        ]
    breakdowns: dict[str, pd.DataFrame] = {}
    skipped: list[str] = []
    extra = {
        c.removeprefix("cell:"): c for c in cell_columns(df) if c.removeprefix("cell:") not in BREAKDOWNS
    }
    for name, col in {**BREAKDOWNS, **extra}.items():
        vals = df[col].astype("string").fillna("")
        if not (vals != "").any():
            continue
        levels = int(vals.nunique())
        if col == "round" and levels > settings.max_groups:
            vals = _round_bins(df[col], settings.max_groups)
            levels = int(vals.nunique())
        if levels > settings.max_groups:
            skipped.append(f"by_{name}: {levels} levels > --max-groups {settings.max_groups} (not written)")
            continue
        sub = df.assign(**{col: vals})
        breakdowns[name] = in_natural_order(
            measure_table(sub, [*BASE_KEYS, col], settings), [*BASE_KEYS, col]
        )
    return Calibration(summary, breakdowns, reliability_table(df, settings), settings, skipped, excluded)


def build_report(result: Calibration, out_dir: Path, figures_on: bool = True) -> dict[str, Path]:
    """Write every table and figure of ``result`` into ``out_dir``.

    Returns:
        Mapping of artefact name → path.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, table in result.tables.items():
        written[name] = out_dir / f"{name}.csv"
        write_table(out_dir, name, table)
    if figures_on and not result.bins.empty:
        for strategy in ("width", "mass"):
            for i, path in enumerate(figures.reliability_diagram(result.bins, out_dir, strategy)):
                written[f"reliability_{strategy}_{i}"] = path
    evm = figures.expected_vs_met(result.summary, out_dir) if figures_on else None
    if evm is not None:
        written["expected_vs_met"] = evm
    written["report"] = out_dir / "report.md"
    text = _markdown(
        result.summary, result.breakdowns, result.settings, written, result.excluded, result.skipped
    )
    written["report"].write_text(text, encoding="utf-8")
    return written


def _markdown(
    summary: pd.DataFrame,
    breakdowns: dict[str, pd.DataFrame],
    settings: Settings,
    written: dict[str, Path],
    excluded: str,
    skipped: list[str],
) -> str:
    pct = round(settings.level * 100)
    parts = [
        "# Calibration report",
        "",
        f"Intervals: {pct}% percentile cluster bootstrap ({settings.n_resamples} resamples, cluster = run "
        f"session or arena match, seed {settings.seed}). ECE with {settings.n_bins} bins. Recalibrated "
        f"Brier scores are cross-fitted ({settings.n_folds} folds of whole clusters, out-of-fold; fewer "
        "folds, or folds of rows, where the clusters do not allow it: see Notes). "
        "`bias` = mean stated p − observed frequency (> 0 over-confident that the event happens, < 0 under-). "
        "Missing confidences are counted, never scored. Native and extracted confidence are separate sources.",
        "",
        "## Summary",
        "",
    ]
    rows = []
    for _, r in summary.iterrows():
        rows.append(
            [
                str(r["source"]),
                str(r["game_type"]),
                str(r["model"]),
                f"{int(r['n'])}",
                f"{int(r['missing'])}",
                f"{int(r['clusters'])}",
                row_interval(r, "brier"),
                row_interval(r, "log_loss"),
                row_interval(r, "ece_width"),
                row_interval(r, "ece_mass"),
                row_interval(r, "bias"),
            ]
        )
    header = ["source", "game", "model", "n", "missing", "clusters", "Brier", "log loss", "ECE (width)"]
    parts.append(md_table([*header, "ECE (mass)", "bias"], rows))
    parts += [
        "",
        "## Murphy decomposition and recalibration",
        "",
        f"`Brier = reliability − resolution + uncertainty` holds exactly when the forecasts are grouped by "
        f"their distinct values, which is done when a row has at most {MAX_EXACT_DISTINCT} distinct p "
        f"(`exact`). With more distinct values they are grouped into {settings.n_bins} equal-width bins "
        "(`binned`) and the identity misses by the within-bin terms: `residual` = Brier − (reliability − "
        "resolution + uncertainty), shown per row.",
        "",
    ]
    rows = []
    for _, r in summary.iterrows():
        if int(r["n"]) == 0:
            continue
        n_distinct = int(r.get("distinct_p", 0))
        grouping = "exact" if n_distinct <= MAX_EXACT_DISTINCT else f"binned ({settings.n_bins})"
        residual = r["brier"] - (r["reliability"] - r["resolution"] + r["uncertainty"])
        rows.append(
            [
                str(r["source"]),
                str(r["game_type"]),
                str(r["model"]),
                row_interval(r, "reliability"),
                row_interval(r, "resolution"),
                row_interval(r, "uncertainty"),
                f"{grouping}, {n_distinct} distinct p",
                f"{residual:.1e}",
                row_interval(r, "brier"),
                row_interval(r, "brier_platt"),
                row_interval(r, "brier_isotonic"),
            ]
        )
    header = ["source", "game", "model", "reliability", "resolution", "uncertainty", "grouping", "residual"]
    parts.append(md_table([*header, "Brier", "Platt", "isotonic"], rows))
    if "n_exact" in summary and (summary["n_exact"] > 0).any():
        parts += ["", "## Against the exact (noise-free) probability", ""]
        rows = [
            [
                str(r["source"]),
                str(r["game_type"]),
                str(r["model"]),
                str(int(r["n_exact"])),
                f"{r['mse_exact']:.4f}",
                f"{r['bias_exact']:+.4f}",
            ]
            for _, r in summary.iterrows()
            if r.get("n_exact", 0) > 0
        ]
        parts.append(md_table(["source", "game", "model", "n", "MSE vs exact", "bias vs exact"], rows))
    for name, table in breakdowns.items():
        if name in ("game", "round"):  # long tables: CSV only
            continue
        col = BREAKDOWNS.get(name, f"cell:{name}")
        parts += ["", f"## By {name}", ""]
        rows = [
            [
                str(r["source"]),
                str(r["game_type"]),
                str(r["model"]),
                str(r[col]),
                f"{int(r['n'])}",
                row_interval(r, "brier"),
                row_interval(r, "bias"),
            ]
            for _, r in table.iterrows()
        ]
        parts.append(md_table(["source", "game", "model", name, "n", "Brier", "bias"], rows))
    notes = [
        f"- {r['source']} / {r['game_type']} / {r['model']}: {r['note']}"
        for _, r in summary.iterrows()
        if r.get("note")
    ]
    for _, r in summary.iterrows():
        n = int(r["n"])
        if n < MIN_RECALIBRATION_PAIRS:
            continue
        unit, k = fold_plan(int(r["clusters"]), n, settings.n_folds)
        where = f"- {r['source']} / {r['game_type']} / {r['model']}: recalibration cross-fitted over"
        if unit == "row":
            notes.append(
                f"{where} {k} folds of rows, not of whole clusters: there is only {int(r['clusters'])} cluster, "
                "so pairs of the same cluster inform each other's recalibration (optimistic)"
            )
        elif k < settings.n_folds:
            notes.append(
                f"{where} {k} folds of whole clusters ({int(r['clusters'])} clusters < {settings.n_folds})"
            )
    notes += [f"- {s}" for s in skipped]
    if notes:
        parts += ["", "## Notes", "", *notes]
    parts += ["", "## Files", ""]
    twin = {".csv": ".md", ".png": ".pdf"}  # every table also as Markdown, every figure also as PDF
    parts += [
        f"- `{p.name}`, `{p.with_suffix(twin[p.suffix]).name}`" if p.suffix in twin else f"- `{p.name}`"
        for k, p in written.items()
        if k != "report"
    ]
    if excluded:
        parts += ["", "## Excluded runs", "", "```", excluded, "```"]
    return "\n".join(parts) + "\n"
