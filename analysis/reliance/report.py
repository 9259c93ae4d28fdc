"""Assemble the reliance report: CSV tables, figures and report.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.cli_options import CommonOptions
from analysis.outputs import write_table
from analysis.reliance import metrics
from analysis.reliance.load import RelianceData
from analysis.text import md_table


@dataclass
class RelianceReport:
    """Every table of the report."""

    main: pd.DataFrame
    by_category: pd.DataFrame
    by_process: pd.DataFrame
    by_stage: pd.DataFrame
    diagnostics: pd.DataFrame
    pairs: pd.DataFrame
    support: pd.DataFrame
    figures: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class RelianceOptions(CommonOptions):
    """The options of ``python -m analysis reliance`` (its flags) that the computation reads."""

    resamples: int = 10_000


def compute(paths: list[str], options: RelianceOptions) -> RelianceReport:
    """Load the reliance runs under ``paths`` and compute every metric."""
    from analysis.reliance.load import load

    data = load(paths, include_incomplete=options.include_incomplete)
    return analyse(data, n_resamples=options.resamples, seed=options.seed, level=options.level)


def analyse(
    data: RelianceData, n_resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> RelianceReport:
    """Compute every metric from the loaded runs."""
    s = data.stages
    return RelianceReport(
        main=metrics.main_metrics(s, data.scenarios, n_resamples, seed, level),
        by_category=metrics.breakdown(s, "category", level),
        by_process=metrics.breakdown(s, "process", level),
        by_stage=metrics.breakdown(s, "stage", level),
        diagnostics=metrics.diagnostics(s, level),
        pairs=metrics.pair_metrics(s, level),
        support=metrics.support_comparison(s, level),
    )


def _md(df: pd.DataFrame, digits: int = 3) -> str:
    if df.empty:
        return "_no data_\n"
    rows = [[f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row] for _, row in df.iterrows()]
    return md_table([str(c) for c in df.columns], rows) + "\n"


def report_tables(rep: RelianceReport) -> dict[str, pd.DataFrame]:
    """Every table of the report, by CSV file name."""
    return {
        "main_metrics": rep.main,
        "accuracy_by_category": rep.by_category,
        "accuracy_by_process": rep.by_process,
        "accuracy_by_stage": rep.by_stage,
        "diagnostics": rep.diagnostics,
        "pairs": rep.pairs,
        "support_comparison": rep.support,
    }


def write_outputs(
    rep: RelianceReport, out: Path, figures: bool = True, n_resamples: int = 10_000
) -> list[Path]:
    """Write CSVs, figures and report.md under ``out``; returns the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in report_tables(rep).items():
        write_table(out, name, df)
        written += [out / f"{name}.csv", out / f"{name}.md"]
    if figures:
        from analysis.reliance.figures import accuracy_figure, breakdown_figure

        if not rep.main.empty:
            rep.figures.append(accuracy_figure(rep.main, out / "accuracy.png"))
        for by, df in (("process", rep.by_process), ("stage", rep.by_stage), ("category", rep.by_category)):
            if not df.empty:
                rep.figures.append(breakdown_figure(df, by, out / f"accuracy_by_{by}.png"))
        written += [p for fig in rep.figures for p in (fig, fig.with_suffix(".pdf"))]
    md = [
        "# Reliance benchmark report\n",
        f"Intervals: blueprint bootstrap ({n_resamples} resamples, the same resamples for every system) for the "
        "main metrics; Wilson 95% for proportions. `blueprints`, `scenarios`, `decisions` and `n` are the "
        f"sample sizes; a system whose main metrics rest on fewer than {metrics.MIN_BLUEPRINTS} blueprints is "
        "flagged `underpowered` in `note` (no interval below 3 blueprints).\n",
        "## Main metrics\n",
        _md(rep.main),
        "## Pairs\n",
        _md(rep.pairs),
        "## Reliability support (baseline vs exact posterior in the prompt)\n",
        _md(rep.support),
        "## Diagnostic subsets\n",
        _md(rep.diagnostics),
        "## Accuracy by process\n",
        _md(rep.by_process),
        "## Accuracy by stage\n",
        _md(rep.by_stage),
        "## Accuracy by category\n",
        _md(rep.by_category),
    ]
    md += [f"![{p.stem}]({p.name})\n" for p in rep.figures]
    path = out / "report.md"
    path.write_text("\n".join(md), encoding="utf-8")
    written.append(path)
    return written
