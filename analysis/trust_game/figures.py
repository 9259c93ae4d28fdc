"""Trust-game figures: sent distribution vs the human reference, return ratio vs sent, per-round curves."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.trust_game.references import BERG_SOURCE, JM_RETURN_FRACTION, berg_distribution

MAX_GROUPS = 8


def label(row: pd.Series | dict, keys: list[str]) -> str:
    """A group's short label: ``trustor(model) → trustee(model)`` plus varying settings."""

    def who(role: str) -> str:
        name, model = str(row[role]), str(row[f"{role}_model"])
        return name if model in ("scripted", "nan") else f"{name}({model})"

    extra = [
        f"{k}={row[k]}" for k in keys if k not in ("trustor", "trustor_model", "trustee", "trustee_model")
    ]
    return " ".join([f"{who('trustor')} → {who('trustee')}", *extra])


def _save(fig: plt.Figure, out: Path) -> Path:
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    fig.savefig(out.with_suffix(".pdf"))
    plt.close(fig)
    return out


def sent_distribution(dist: pd.DataFrame, keys: list[str], out: Path) -> Path:
    """Share of trustors per sent fraction, per group, next to Berg et al. (1995)."""
    groups = list(dist.groupby(keys, sort=True, dropna=False))[:MAX_GROUPS]
    berg = berg_distribution()
    xs = sorted(set(dist["sent_fraction"].round(4)) | set(berg.index.round(4)))
    width = 0.8 / (len(groups) + 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(xs) + 2), 3.8))
    pos = np.arange(len(xs))
    ax.bar(pos, [berg.get(x, 0.0) for x in xs], width, color="0.6", hatch="//", label=f"human: {BERG_SOURCE}")
    for i, (key, g) in enumerate(groups, start=1):
        key = key if isinstance(key, tuple) else (key,)
        share = g.set_index(g["sent_fraction"].round(4))["share"]
        ax.bar(
            pos + i * width,
            [share.get(x, 0.0) for x in xs],
            width,
            label=label(dict(zip(keys, key, strict=True)), keys),
        )
    ax.set_xticks(pos + width * len(groups) / 2, [f"{x:.2g}" for x in xs], fontsize=7)
    ax.set_xlabel("sent fraction s/E")
    ax.set_ylabel("share of trustors")
    ax.legend(fontsize=6)
    return _save(fig, out)


def return_vs_sent(df: pd.DataFrame, keys: list[str], out: Path) -> Path:
    """Return ratio r/(k·s) against the sent fraction (exchanges with s > 0; jittered), mean per amount."""
    pos = df[df["sent"] > 0]
    fig, ax = plt.subplots(figsize=(6, 4))
    rng = np.random.default_rng(0)
    for key, g in list(pos.groupby(keys, sort=True, dropna=False))[:MAX_GROUPS]:
        key = key if isinstance(key, tuple) else (key,)
        jitter = rng.uniform(-0.012, 0.012, len(g))
        pts = ax.scatter(g["sent_fraction"] + jitter, g["ratio"], s=8, alpha=0.35)
        mean = g.groupby("sent_fraction")["ratio"].mean()
        ax.plot(
            mean.index,
            mean.to_numpy(),
            "-o",
            ms=3,
            color=np.asarray(pts.get_facecolor())[0][:3],
            label=label(dict(zip(keys, key, strict=True)), keys),
        )
    ax.axhline(JM_RETURN_FRACTION, ls="--", color="0.4", lw=1, label="human: Johnson & Mislin 2011 (≈ 0.37)")
    ks = sorted(set(df["multiplier"].astype(float)))
    if len(ks) == 1:  # r = s, the trustor's break-even, is a return ratio of 1/k
        ax.axhline(1 / ks[0], ls=":", color="0.6", lw=1, label=f"break-even r = s (k = {ks[0]:g})")
    ax.set_xlabel("sent fraction s/E")
    ax.set_ylabel("return ratio r/(k·s)")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=6)
    return _save(fig, out)


def per_round_curves(rounds: pd.DataFrame, keys: list[str], out: Path) -> Path:
    """Mean sent fraction and pooled return ratio per round, with 95% cluster-bootstrap intervals."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharex=True)
    for key, g in list(rounds.groupby(keys, sort=True, dropna=False))[:MAX_GROUPS]:
        key = key if isinstance(key, tuple) else (key,)
        name = label(dict(zip(keys, key, strict=True)), keys)
        for ax, measure in zip(axes, ("sent_fraction", "return_ratio_pooled"), strict=True):
            x = g["round"].to_numpy(float)
            y = g[measure].to_numpy(float)
            ax.plot(x, y, "-o", ms=3, label=name)
            ax.fill_between(
                x, g[f"{measure}_low"].to_numpy(float), g[f"{measure}_high"].to_numpy(float), alpha=0.15
            )
    axes[0].set_ylabel("mean sent fraction s/E")
    axes[1].set_ylabel("return ratio Σr / Σk·s")
    for ax in axes:
        ax.set_xlabel("round")
        ax.set_ylim(-0.03, 1.03)
    axes[0].legend(fontsize=6)
    return _save(fig, out)
