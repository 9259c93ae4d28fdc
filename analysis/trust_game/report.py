"""The trust-game analysis: the exchanges' measures, the comparison with human references, figures, report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.cli_options import CommonOptions
from analysis.outputs import write_table
from analysis.rundirs import Discovery, RunDirError, discover_runs, read_tables
from analysis.text import interval_text, md_table, row_interval


def load(dirs: list[str], include_incomplete: bool) -> tuple[pd.DataFrame, Discovery]:
    """Exchanges of every trust-game run under ``dirs`` (each run once), checked."""
    from analysis.trust_game.measures import check_exchanges

    # discover_runs counts each run once (by run id and config hash)
    found = discover_runs(dirs, include_incomplete=include_incomplete, game="trust_game")
    if not found.runs:
        raise RunDirError(f"no trust_game run directories ({found.report() or 'no manifest.json found'})")
    df = read_tables(found.runs, "exchanges.csv")
    if df.empty:
        raise RunDirError("none of the trust_game runs has a non-empty exchanges.csv")
    return check_exchanges(df), found


@dataclass(frozen=True)
class TrustGameOptions(CommonOptions):
    """The options of ``python -m analysis trust_game`` (its flags) that the computation reads."""


@dataclass
class TrustGame:
    """The trust-game analysis: the exchanges read and every table computed from them."""

    options: TrustGameOptions
    found: Discovery
    exchanges: pd.DataFrame
    keys: list[str]
    tables: dict[str, pd.DataFrame]  # summary, sent_distribution, per_round, low_return_response, breakdown,
    # reference_comparison


def compute(paths: list[str], options: TrustGameOptions) -> TrustGame:
    """Read the exchanges of every trust-game run under ``paths`` and compute every table."""
    from analysis.trust_game.measures import (
        breakdown_rounds,
        breakdown_summary,
        group_keys,
        low_return_response,
        per_round,
        sent_distribution,
        summary_table,
    )
    from analysis.trust_game.references import comparisons

    df, found = load(paths, options.include_incomplete)
    n, seed, level = options.resamples, options.seed, options.level
    keys = group_keys(df)
    tables = {
        "summary": summary_table(df, n, seed, level),
        "sent_distribution": sent_distribution(df),
        "per_round": per_round(df, n, seed, level),
        "low_return_response": low_return_response(df, n, seed, level),
        "breakdown": breakdown_summary(breakdown_rounds(df)),
        "reference_comparison": comparisons(df, keys, n, seed, level),
    }
    return TrustGame(options, found, df, keys, tables)


def write_report(result: TrustGame, out: Path, figures_on: bool = True) -> Path:
    """Write the tables, the figures (``figures_on``) and ``report.md`` under ``out``; returns its path."""
    from analysis.trust_game import figures

    out.mkdir(parents=True, exist_ok=True)
    for name, table in result.tables.items():
        write_table(out, name, table)
    df, found, keys = result.exchanges, result.found, result.keys
    n, seed, level = result.options.resamples, result.options.seed, result.options.level
    summary, dist, rounds = (
        result.tables["summary"],
        result.tables["sent_distribution"],
        result.tables["per_round"],
    )
    low, breakdown, refs = (
        result.tables[t] for t in ("low_return_response", "breakdown", "reference_comparison")
    )
    figs: list[Path] = []
    if figures_on:
        figs.append(figures.sent_distribution(dist, keys, out / "sent_distribution.png"))
        figs.append(figures.return_vs_sent(df, keys, out / "return_vs_sent.png"))
        if df["round"].max() > 1:
            figs.append(figures.per_round_curves(rounds, keys, out / "per_round.png"))
    pct = round(100 * level)
    lines = [
        "# Trust game report",
        "",
        f"{len(found.runs)} run(s), {df['cluster'].nunique()} pairs, {len(df)} exchanges. Intervals: {pct}% "
        f"percentile cluster bootstrap over pairs (a pair's whole repeated play is one cluster; {n} resamples, "
        f"seed {seed}).",
        "",
        "Sent fraction = mean s/E; return ratio over exchanges with s > 0 (mean of r/(k·s), and pooled "
        "Σr/Σk·s); efficiency = (k−1)Σs / ((k−1)·E·exchanges); reciprocity slope = OLS slope of r on s; "
        "payoffs per exchange.",
        "",
        "## Summary",
        "",
    ]
    header = ["group", "pairs", "exchanges", "sent fraction", "return ratio (mean)", "return ratio (pooled)",
              "efficiency", "reciprocity slope", "trustor payoff", "trustee payoff"]  # fmt: skip
    rows = []
    for _, r in summary.iterrows():
        rows.append(
            [
                figures.label(r, keys),
                str(r["pairs"]),
                str(r["exchanges"]),
                row_interval(r, "sent_fraction"),
                row_interval(r, "return_ratio_mean"),
                row_interval(r, "return_ratio_pooled"),
                row_interval(r, "efficiency"),
                row_interval(r, "reciprocity_slope"),
                row_interval(r, "trustor_payoff", 2),
                row_interval(r, "trustee_payoff", 2),
            ]
        )
    lines.append(md_table(header, rows))
    if "invalid" in summary.columns and summary["invalid"].sum():
        lines += ["", f"Invalid amounts (resolved as 0): {int(summary['invalid'].sum())} exchange(s)."]
    lines += ["", "## Compared with human references", ""]
    lines += [
        "Berg et al. (1995): the 32 trustors of the no-history treatment (bootstrap / Wilson intervals; the "
        "difference resamples pairs and Berg's trustors independently). Johnson & Mislin (2011): approximate "
        "meta-analytic point values (no interval; the difference carries the group's interval). Berg "
        "comparisons use each pair's first round (one-shot behaviour).",
        "",
    ]
    ref_rows = [
        [
            figures.label(r, keys),
            str(r["measure"]),
            str(r["reference"]),
            interval_text(r["value"]),
            interval_text(r["reference_value"], r["reference_low"], r["reference_high"]),
            interval_text(r["difference"], r["difference_low"], r["difference_high"]),
        ]
        for _, r in refs.iterrows()
    ]
    lines.append(
        md_table(["group", "measure", "reference", "value", "reference value", "difference"], ref_rows)
    )
    if df["round"].max() > 1:
        lines += ["", "## Repeated play", "", "Response to a low return: the change in s/E in the next round after "
                  "a round with r < s, compared with after r ≥ s (rounds with s > 0 that have a next round).", ""]  # fmt: skip
        low_rows = [
            [
                figures.label(r, keys),
                f"{row_interval(r, 'after_low')} (n={r['after_low_n']})",
                f"{row_interval(r, 'after_ok')} (n={r['after_ok_n']})",
                row_interval(r, "difference"),
            ]
            for _, r in low.iterrows()
        ]
        lines.append(md_table(["group", "Δ s/E after r < s", "Δ s/E after r ≥ s", "difference"], low_rows))
        lines += ["", "Breakdown: the first round with s = 0 after a positive s.", ""]
        b_rows = [
            [
                figures.label(r, keys),
                str(r["pairs"]),
                str(r["broke"]),
                interval_text(r["mean_breakdown_round"], digits=2),
            ]
            for _, r in breakdown.iterrows()
        ]
        lines.append(md_table(["group", "pairs", "broke down", "mean breakdown round"], b_rows))
        lines += [
            "",
            "Per-round means with intervals: per_round.csv" + (" and per_round.png." if figs else "."),
        ]
    if figs:
        lines += ["", "## Figures", ""] + [f"![{f.stem}]({f.name})" for f in figs]
    lines += ["", "Files: " + ", ".join(f"{t}.csv/.md" for t in ("summary", "sent_distribution", "per_round",
              "low_return_response", "breakdown", "reference_comparison")) + "; figures as .png and .pdf"]  # fmt: skip
    if found.excluded:
        lines += ["", "## Excluded runs", "", "```", found.report(), "```"]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "report.md"
