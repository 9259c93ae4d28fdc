"""Arena figures: the match-by-round grid (cells coloured by joint move) and the tournament payoffs."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from analysis.arena.measures import joint_codes

JOINT = ("CC", "CD", "DC", "DD")
COLOURS = ("#2b8a3e", "#f4a261", "#457b9d", "#c1121f")  # mutual C, A exploited, B exploited, mutual D


def match_grid(moves: pd.DataFrame, out: Path, max_matches: int = 60) -> tuple[Path, int]:
    """One row per match (seat A's view: ``A vs B``), one column per round, coloured by joint move.

    Shows the first ``max_matches`` matches in (run, match) order; returns the path and the number shown.
    Rounds beyond a match's end are left blank.
    """
    a = moves[moves["seat"] == "A"].sort_values(["run_id", "match", "round"], kind="stable")
    ids = a[["run_id", "match"]].drop_duplicates().head(max_matches)
    a = a.merge(ids, on=["run_id", "match"])
    n_rounds = int(a["round"].max())
    grid = np.full((len(ids), n_rounds), np.nan)
    labels = []
    for i, ((_run, match), g) in enumerate(a.groupby(["run_id", "match"], sort=False)):
        grid[i, g["round"].to_numpy() - 1] = joint_codes(g["move"], g["opponent_move"])
        labels.append(f"{g['player'].iloc[0]} vs {g['opponent'].iloc[0]} ({match})")
    fig_h = max(2.5, 0.22 * len(ids) + 1.5)
    fig, ax = plt.subplots(figsize=(min(16, 4 + 0.06 * n_rounds * 2), fig_h))
    ax.imshow(
        np.ma.masked_invalid(grid),
        cmap=ListedColormap(COLOURS),
        vmin=-0.5,
        vmax=3.5,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_yticks(np.arange(len(labels)), labels, fontsize=6)
    ax.set_xlabel("round")
    ax.set_title("Joint moves by round (row player's move first)", fontsize=9)
    ax.legend(
        handles=[Patch(color=c, label=j) for c, j in zip(COLOURS, JOINT, strict=True)],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=7,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out, len(ids)


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
    for sel, style, label in (
        (ranked, {"fmt": "o"}, "ranked"),
        (~ranked, {"fmt": "o", "mfc": "white", "color": "0.5"}, "underpowered (not ranked)"),
    ):
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
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
