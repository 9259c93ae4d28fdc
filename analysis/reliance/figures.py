"""Figures of the reliance report (matplotlib, Agg backend; each saved as PNG and PDF, legends below the
axes)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.outputs import save_figure


def accuracy_figure(main: pd.DataFrame, path: Path) -> Path:
    """Blueprint-macro accuracy and all-stage success per system, with bootstrap intervals."""
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(main) + 2), 3.5))
    x = np.arange(len(main))
    for k, (col, label) in enumerate(
        (
            ("macro_accuracy", "decision accuracy (blueprint macro)"),
            ("all_stage_success", "all-stage success"),
        )
    ):
        est = main[col].to_numpy(dtype=float)
        err = np.vstack(
            [est - main[f"{col}_low"].to_numpy(dtype=float), main[f"{col}_high"].to_numpy(dtype=float) - est]
        )
        ax.bar(
            x + (k - 0.5) * 0.38,
            est,
            width=0.36,
            yerr=np.clip(np.nan_to_num(err), 0, None),
            capsize=3,
            label=label,
        )
    ax.set_xticks(x, main["system"], rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share")
    return _save_with_legend_below(fig, ax, path)


def breakdown_figure(table: pd.DataFrame, by: str, path: Path) -> Path:
    """Pooled accuracy by ``by`` per system (grouped bars, Wilson intervals)."""
    keys = sorted(table[by].unique(), key=str)
    systems = sorted(table["system"].unique())
    fig, ax = plt.subplots(
        figsize=(min(14, max(5, 0.5 * len(keys) * len(systems) + 2)), 3.8)
    )  # readable at A4
    width = 0.8 / max(1, len(systems))
    for i, system in enumerate(systems):
        d = table[table["system"] == system].set_index(by).reindex(keys)
        est = d["share"].to_numpy(dtype=float)
        err = np.vstack([est - d["low"].to_numpy(dtype=float), d["high"].to_numpy(dtype=float) - est])
        ax.bar(
            np.arange(len(keys)) + (i - (len(systems) - 1) / 2) * width,
            est,
            width=width * 0.95,
            yerr=np.clip(np.nan_to_num(err), 0, None),
            capsize=2,
            label=system,
        )
    ax.set_xticks(
        np.arange(len(keys)),
        [str(k) for k in keys],
        rotation=35 if len(keys) > 6 else 0,
        ha="right" if len(keys) > 6 else "center",
        fontsize=7 if len(keys) > 6 else 9,
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("decision accuracy")
    ax.set_title(f"accuracy by {by}")
    return _save_with_legend_below(fig, ax, path)


def _save_with_legend_below(fig: plt.Figure, ax: plt.Axes, path: Path) -> Path:
    """The legend under the axes (never over a bar), then PNG and PDF."""
    fig.tight_layout()
    handles, labels = ax.get_legend_handles_labels()
    legend = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
                        ncol=max(1, min(len(labels), 4)), fontsize=8)  # fmt: skip
    return save_figure(fig, path, bbox_inches="tight", bbox_extra_artists=[legend])
