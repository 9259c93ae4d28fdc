"""Calibration figures: reliability diagrams and expected-vs-met per model (each as PNG and PDF)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.outputs import save_figure


def _slug(*parts: object) -> str:
    text = "_".join(str(p) for p in parts)
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in text)


def _save_with_legend_below(fig: plt.Figure, ax: plt.Axes, path: Path) -> None:
    """Save with the legend under the axes (never over the data); the canvas grows to hold it."""
    fig.tight_layout()
    box = ax.get_tightbbox()  # with the figure's renderer
    if box is None:  # an invisible axes: nothing to keep clear of
        box = ax.bbox
    below = box.transformed(ax.transAxes.inverted()).y0
    legend = ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, below - 0.02), frameon=False)
    save_figure(fig, path, bbox_inches="tight", bbox_extra_artists=[legend])


def reliability_diagram(bins: pd.DataFrame, out_dir: Path, strategy: str = "width") -> list[Path]:
    """One reliability diagram per source × game: one line per model, marker area ∝ bin count,
    vertical bars = Wilson intervals of the observed frequency, diagonal = perfect calibration."""
    paths = []
    sel = bins[bins["strategy"] == strategy]
    for (source, game), g in sel.groupby(["source", "game_type"], sort=True):
        fig, ax = plt.subplots(figsize=(5.5, 5.5))
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect calibration")
        biggest = float(g["count"].max())
        for model, m in g.groupby("model", sort=True):
            line = ax.plot(m["mean_p"], m["observed"], lw=1, label=f"{model} (n={int(m['count'].sum())})")[0]
            yerr = np.clip(
                np.vstack([m["observed"] - m["observed_low"], m["observed_high"] - m["observed"]]), 0, None
            )
            ax.errorbar(m["mean_p"], m["observed"], yerr=yerr, fmt="none", ecolor=line.get_color(), alpha=0.6)
            ax.scatter(
                m["mean_p"],
                m["observed"],
                s=20 + 280 * m["count"] / biggest,
                color=line.get_color(),
                alpha=0.7,
                edgecolor="k",
                lw=0.5,
            )
        ax.set(
            xlim=(-0.02, 1.02),
            ylim=(-0.02, 1.02),
            xlabel="stated probability (bin mean)",
            ylabel="observed frequency",
            title=f"{game} — {source} ({strategy} bins; marker area ∝ count)",
        )
        ax.title.set_fontsize(9)
        path = out_dir / f"reliability_{_slug(source, game, strategy)}.png"
        _save_with_legend_below(fig, ax, path)
        paths.append(path)
    return paths


def expected_vs_met(summary: pd.DataFrame, out_dir: Path) -> Path | None:
    """Mean stated probability (expected) against observed frequency (met) per model, with intervals."""
    s = summary[summary["n"] > 0].reset_index(drop=True)
    if s.empty:
        return None
    labels = [
        f"{r.model}\n{r.game_type} · {r.source}\nn={r.n}, {r.clusters} cluster{'s' if r.clusters != 1 else ''}"
        for r in s.itertuples()
    ]
    x = np.arange(len(s))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(s) + 2), 4.5))
    for offset, col, name in (
        (-0.12, "mean_p", "expected (mean stated p)"),
        (0.12, "observed", "met (observed)"),
    ):
        yerr = np.vstack([s[col] - s[f"{col}_low"], s[f"{col}_high"] - s[col]])
        yerr = np.clip(np.nan_to_num(yerr, nan=0.0), 0, None)  # float noise at degenerate intervals
        ax.errorbar(x + offset, s[col], yerr=yerr, fmt="o", capsize=3, label=name)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set(ylim=(0, 1), ylabel="probability", title="Expected vs met per model (95% cluster bootstrap)")
    path = out_dir / "expected_vs_met.png"
    _save_with_legend_below(fig, ax, path)
    return path
