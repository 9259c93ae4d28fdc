"""Arena figures: the match-by-round grid (cells coloured by joint move) and the tournament payoffs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from analysis.arena.measures import joint_codes
from analysis.outputs import save_figure

JOINT = ("CC", "CD", "DC", "DD")
COLOURS = ("#2b8a3e", "#f4a261", "#457b9d", "#c1121f")  # mutual C, A exploited, B exploited, mutual D


ROW_INCHES = 0.2  # one match row: room for a 7-point label


def match_grid(
    moves: pd.DataFrame, out: Path, max_matches: int = 60
) -> tuple[Path, list[tuple[str, int, int]]]:
    """One panel per run (a run's matches are never mixed with another's), one row per match (seat A's view:
    ``A vs B``), one column per round, coloured by joint move; rounds beyond a match's end are blank.

    ``max_matches`` rows in all, shared evenly between the runs (the first matches of each, in match order).
    Writes ``out`` (PNG) and its PDF; returns the PNG path and per run (run id, matches shown, matches).
    """
    a = moves[moves["seat"] == "A"].sort_values(["run_id", "match", "round"], kind="stable")
    runs = list(dict.fromkeys(a["run_id"].astype(str)))
    per_run = max(1, math.ceil(max_matches / max(1, len(runs))))
    panels = []
    for run in runs:
        r = a[a["run_id"].astype(str) == run]
        matches = list(dict.fromkeys(r["match"].astype(str)))
        shown = matches[:per_run]
        r = r[r["match"].astype(str).isin(shown)]
        n_rounds = int(r["round"].max())
        grid = np.full((len(shown), n_rounds), np.nan)
        labels = []
        for i, (match, g) in enumerate(r.groupby(r["match"].astype(str), sort=False)):
            grid[i, g["round"].to_numpy() - 1] = joint_codes(g["move"], g["opponent_move"])
            labels.append(f"{g['player'].iloc[0]} vs {g['opponent'].iloc[0]} ({match})")
        panels.append((run, grid, labels, len(matches)))
    rows = [len(p[2]) + 2 for p in panels]  # + title and axis
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(11, ROW_INCHES * sum(rows) + 0.8), squeeze=False,
        gridspec_kw={"height_ratios": rows},
    )  # fmt: skip
    for ax, (run, grid, labels, total) in zip(axes[:, 0], panels, strict=True):
        ax.imshow(np.ma.masked_invalid(grid), cmap=ListedColormap(COLOURS), vmin=-0.5, vmax=3.5, aspect="auto",
                  interpolation="nearest", extent=(0.5, grid.shape[1] + 0.5, len(labels) - 0.5, -0.5))  # fmt: skip
        ax.set_yticks(np.arange(len(labels)), labels, fontsize=7)
        ax.set_xlabel("round", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        more = f"first {len(labels)} of {total} matches" if len(labels) < total else f"{total} matches"
        ax.set_title(f"run {run}: {more}", fontsize=8, loc="left")
    title = fig.suptitle("Joint moves by round (row player's move first)", fontsize=9, y=1.0, va="bottom")
    legend = fig.legend(
        handles=[Patch(color=c, label=j) for c, j in zip(COLOURS, JOINT, strict=True)],
        loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=8, frameon=False,
    )  # fmt: skip
    fig.tight_layout()
    save_figure(fig, out, bbox_inches="tight", bbox_extra_artists=[legend, title])
    return out, [(run, len(labels), total) for run, _, labels, total in panels]


def tournament_payoffs(table: pd.DataFrame, out: Path) -> Path:
    """Payoff per round per player with intervals, best first."""
    t = table.iloc[::-1]
    fig, ax = plt.subplots(figsize=(6, max(2.5, 0.3 * len(t) + 1)))
    err = np.clip(
        np.nan_to_num(
            np.vstack(
                [
                    t["payoff_per_round"] - t["payoff_per_round_low"],
                    t["payoff_per_round_high"] - t["payoff_per_round"],
                ]
            )
        ),
        0,
        None,
    )
    y = np.arange(len(t))
    ranked = t["ranked"].to_numpy(dtype=bool) if "ranked" in t else np.ones(len(t), dtype=bool)
    series: list[tuple[np.ndarray, dict[str, Any], str]] = [
        (ranked, {"fmt": "o"}, "ranked"),
        (~ranked, {"fmt": "o", "mfc": "white", "color": "0.5"}, "underpowered (not ranked)"),
    ]
    for sel, style, label in series:
        if sel.any():
            ax.errorbar(t["payoff_per_round"][sel], y[sel], xerr=err[:, sel], capsize=3, label=label, **style)
    labels = []
    for r in t.itertuples():
        who = f"{r.player} ({r.model})" if r.model != "scripted" else str(r.player)
        labels.append(f"{who}, n={r.matches}")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlabel("payoff per round (95% cluster bootstrap; n = matches)")
    if not ranked.all():
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False)
    fig.tight_layout()
    return save_figure(fig, out)
