"""Figures of the trust report (matplotlib, Agg backend; each saved as PNG and PDF).

Every function returns the list of written base names, or an empty list with a reason when the data lack
the cells the figure needs (the report says so instead of drawing an empty plot).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from analysis.escape_room.measures import CellResult, Delta
from analysis.escape_room.schedules import MULTI_FAILURE, schedule_sort_key

FigureResult = tuple[str | None, str]
"""(base name written or None, caption or reason it was skipped)."""


def _save(fig: plt.Figure, out_dir: Path, name: str, legend: tuple[list, list] | None = None) -> str:
    """Save as PNG and PDF. ``legend`` = (handles, labels) of one legend for the whole figure, drawn below
    the panels (never over the data); the saved canvas grows to hold it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    extra = []
    if legend is not None and legend[0]:
        handles, labels = legend
        extra.append(
            fig.legend(
                handles,
                labels,
                loc="upper center",
                bbox_to_anchor=(0.5, 0.0),
                ncol=max(1, min(len(labels), 4, int(fig.get_figwidth() // 2.2))),
                fontsize=8,
                frameon=False,
            )
        )
    for ext, dpi in (("png", 130), ("pdf", None)):
        fig.savefig(out_dir / f"{name}.{ext}", dpi=dpi, bbox_inches="tight", bbox_extra_artists=extra)
    plt.close(fig)
    return name


def _merged_legend(axes: np.ndarray | list[plt.Axes]) -> tuple[list, list]:
    """Handles and labels of every panel, each label once (first occurrence)."""
    seen: dict[str, object] = {}
    for ax in np.ravel(np.asarray(axes, dtype=object)):
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, h)
    return list(seen.values()), list(seen)


def _who(model: object, agent: object) -> str:
    """A readable name: the model, or ``scripted:<agent>`` for offline agents (their model is ``scripted``)."""
    return f"scripted:{agent}" if str(model) == "scripted" and str(agent) not in ("", "nan") else str(model)


def _with_who(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``who``: the model (``scripted:<agent>`` for offline agents), plus agent kind / partner slot when
    the frame holds several."""
    out = df.copy()
    agents = out["agent"] if "agent" in out else pd.Series([""] * len(out), index=out.index)
    out["who"] = [_who(m, a) for m, a in zip(out["model"], agents, strict=True)]
    extra = [k for k in ("agent", "partner_slot") if k in out and out[k].nunique() > 1]
    if extra:
        parts = out[extra].astype(str)
        if "agent" in extra:  # a scripted agent is already named
            parts.loc[out["model"].astype(str) == "scripted", "agent"] = ""
        tail = parts.agg(lambda r: ", ".join(x for x in r if x), axis=1)
        out["who"] = out["who"] + [f" ({t})" if t else "" for t in tail]
    return out


D_WRONG_PATCH = Patch(facecolor="gold", alpha=0.3, label="D wrong (shaded game)")
MAX_BANDS = 3  # interval bands drawn in one panel at most: more overlap into an unreadable smear
HEADROOM = 1.12  # the y axis reaches this far above the tallest bar, so no bar touches the frame


def _game_axis(ax: plt.Axes, last_game: int) -> None:
    """Games are numbered from 1: integer ticks from game 1 to ``last_game`` in every panel."""
    step = max(1, math.ceil(last_game / 12))
    ax.set_xlim(0.5, last_game + 0.5)
    ax.set_xticks(range(1, last_game + 1, step))


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def _grid(n: int, width: float = 4.2, height: float = 3.2) -> tuple[plt.Figure, np.ndarray]:
    cols = min(3, max(1, n))
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def verification_by_round(by_round: pd.DataFrame, out_dir: Path) -> FigureResult:
    """Memoryless verifications per game by round, stacked by target puzzle, one panel per model."""
    if by_round.empty:
        return None, "no memoryless (memory=none) D-correct games with verifications in the data"
    by_round = _with_who(by_round)
    models = sorted(by_round["who"].unique())  # memoryless cells of one model pooled, as the anchor
    puzzles = sorted(by_round["target"].unique())
    fig, axes = _grid(len(models))
    colours = plt.get_cmap("tab10")
    for ax, model in zip(axes, models, strict=False):
        sub = by_round[by_round["who"] == model].pivot_table(
            index="round", columns="target", values="per_game", aggfunc="sum", fill_value=0.0
        )
        bottom = np.zeros(len(sub))
        for p in puzzles:
            vals = sub[p].to_numpy() if p in sub.columns else np.zeros(len(sub))
            ax.bar(sub.index, vals, bottom=bottom, color=colours(p - 1), label=f"Q{p}")
            bottom += vals
        for x, total in zip(sub.index, bottom, strict=True):
            ax.annotate(f"{total:.2f}", (x, total), xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=7)  # fmt: skip
        # explicit: a zero-height segment stacked on the tallest bar would pin the autoscaled top to it
        ax.set_ylim(0, max(float(bottom.max()), 0.1) * HEADROOM)
        ax.set_title(model, fontsize=9)
        ax.set_xlabel("round")
        ax.set_ylabel("verifications / game")
        ax.set_xticks(sub.index)
    handles, labels = _merged_legend(axes)
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    legend = ([handles[i] for i in order], [f"target {labels[i]}" for i in order])
    name = _save(fig, out_dir, "fig_verification_by_round", legend)
    return (
        name,
        "Memoryless cells: verifications per D-correct game by round, stacked by the verified puzzle.",
    )


def per_game_bars(curves: pd.DataFrame, out_dir: Path) -> FigureResult:
    """Per-game verification bars (partner segment vs rest), smooth vs 1strike, one row per model."""
    sel = _with_who(curves[curves["schedule"].isin(["smooth", "1strike"]) & (curves["memory"] != "none")])
    if sel.empty:
        return None, "no smooth or 1strike cells with memory in the data"
    sel["who"] = sel["who"] + " / " + sel["memory"].astype(str)
    models = sorted(sel["who"].unique())
    fig, axes = plt.subplots(len(models), 2, figsize=(9, 2.6 * len(models)), squeeze=False, sharey="row")
    for i, model in enumerate(models):
        for j, schedule in enumerate(("smooth", "1strike")):
            ax = axes[i, j]
            sub = sel[(sel["who"] == model) & (sel["schedule"] == schedule)].sort_values("game")
            if sub.empty:
                ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
                ax.set_axis_off()
                continue
            partner = sub["partner_verifications"] / sub["games"]
            rest = (sub["verifications"] - sub["partner_verifications"]) / sub["games"]
            ax.bar(sub["game"], partner, color="tab:red", label="partner's puzzle")
            ax.bar(sub["game"], rest, bottom=partner, color="tab:gray", label="other puzzles")
            for g in sub.loc[sub["d_correct_share"] < 1, "game"]:
                ax.axvspan(g - 0.5, g + 0.5, color="gold", alpha=0.25, lw=0, zorder=0)
            ax.set_title(f"{model} — {schedule}", fontsize=9)
            _game_axis(ax, int(sub["game"].max()))  # games played by this cell (none shown as zero)
            ax.set_xlabel("game")
            ax.set_ylabel("verifications / game")
    handles, labels = _merged_legend(axes)
    if (sel["d_correct_share"] < 1).any():
        handles, labels = [*handles, D_WRONG_PATCH], [*labels, D_WRONG_PATCH.get_label()]
    name = _save(fig, out_dir, "fig_per_game_bars", (handles, labels))
    return name, (
        "Verifications per game by game index (partner's puzzle vs the rest); yellow shading = a game in "
        "which the partner D was wrong in at least one session."
    )


def two_axis_scatter(deltas: list[Delta], out_dir: Path) -> FigureResult:
    """Δtrust (smooth) vs Δtarget (1strike) per model, with interval whiskers."""
    pts = []
    groups = sorted(
        {(d.keys["model"], d.keys["agent"], d.keys["partner_slot"], d.keys["memory"]) for d in deltas}
    )
    several_agents = len({g[1:3] for g in groups}) > 1
    for model, agent, slot, memory in groups:
        same = [d for d in deltas if (d.keys["model"], d.keys["agent"], d.keys["partner_slot"], d.keys["memory"])
                == (model, agent, slot, memory)]  # fmt: skip
        dt = next((d for d in same if d.keys["schedule"] == "smooth" and d.measure == "delta_trust"), None)
        dg = next((d for d in same if d.keys["schedule"] == "1strike" and d.measure == "delta_target"), None)
        if dt and dg and not math.isnan(dt.interval.estimate) and not math.isnan(dg.interval.estimate):
            who = f"{model} ({agent}, {memory})" if several_agents else f"{model} ({memory})"
            pts.append((who, dt.interval, dg.interval))
    if not pts:
        return None, "needs, for some model, a smooth and a 1strike cell and an anchor (data or published)"
    fig, ax = plt.subplots(figsize=(6.2, 4.8))
    for i, (who, x, y) in enumerate(pts):
        xerr = [[x.estimate - x.low], [x.high - x.estimate]] if x.has_interval else None
        yerr = [[y.estimate - y.low], [y.high - y.estimate]] if y.has_interval else None
        ax.errorbar(
            x.estimate, y.estimate, xerr=xerr, yerr=yerr, fmt="o", capsize=3, color=f"C{i % 10}", label=who
        )
    ax.axhline(0, color="k", lw=0.6)
    ax.axvline(0, color="k", lw=0.6)
    ax.set_xlabel("Δtrust = verif./game (smooth) − anchor   (← trust formed)")
    ax.set_ylabel("Δtarget = partner share (1strike) − anchor   (↑ culprit targeted)")
    name = _save(fig, out_dir, "fig_two_axis", ax.get_legend_handles_labels())
    return name, "Trust formation vs culprit targeting per model, with 95% cluster-bootstrap whiskers."


def recovery(curves: pd.DataFrame, out_dir: Path) -> FigureResult:
    """Verifications per game by game index under multi-failure schedules; failure games shaded."""
    schedules = [s for s in MULTI_FAILURE if s in set(curves["schedule"])]
    schedules += sorted({s for s in curves["schedule"] if s.startswith("custom:")})
    if not schedules:
        return None, "no multi-failure schedule (2strike, 3strike, mid2strike, recur) in the data"
    fig, axes = _grid(len(schedules))
    sel = _with_who(curves[curves["schedule"].isin(schedules)])
    colour = {k: f"C{i % 10}" for i, k in enumerate(sorted(set(zip(sel["who"], sel["memory"], strict=True))))}
    banded = unbanded = 0
    for ax, schedule in zip(axes, schedules, strict=False):
        sub = sel[sel["schedule"] == schedule]
        fail = sorted(sub.loc[sub["d_correct_share"] < 1, "game"].unique())
        for g in fail:
            ax.axvspan(g - 0.5, g + 0.5, color="gold", alpha=0.3, lw=0, zorder=0)
        for (model, memory), m in sub.groupby(["who", "memory"], sort=True):
            m = m.sort_values("game")
            c = colour[(model, memory)]
            ax.plot(m["game"], m["volume"], marker="o", ms=3, color=c, label=f"{model} ({memory})")
            ok = m["volume_low"].notna()
            if ok.any():
                ax.fill_between(
                    m.loc[ok, "game"], m.loc[ok, "volume_low"], m.loc[ok, "volume_high"], color=c, alpha=0.15
                )
            banded += bool(ok.any())
            unbanded += not ok.all()
        ax.set_title(schedule, fontsize=9)
        _game_axis(ax, int(sub["game"].max()))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("game (shaded: D wrong)")
        ax.set_ylabel("verifications / game")
    handles, labels = _merged_legend(axes)
    name = _save(
        fig, out_dir, "fig_recovery", ([*handles, D_WRONG_PATCH], [*labels, D_WRONG_PATCH.get_label()])
    )
    caption = "Recovery under multi-failure schedules: verifications per game"
    return name, caption + _bands_note(banded, unbanded, "shaded = D wrong")


def _bands_note(banded: int, unbanded: int, tail: str = "") -> str:
    """What a caption may promise about interval bands (``banded``/``unbanded``: curves drawn with and
    without one): only the bands that were drawn. ``tail`` ends the sentence."""
    if banded and not unbanded:
        text = " with 95% cluster-bootstrap bands"
    elif banded:
        text = "; 95% cluster-bootstrap bands where a curve has at least 3 clusters, none elsewhere"
    else:
        text = " (no interval bands: every curve has fewer than 3 clusters: sessions, or games in memoryless cells)"
    return text + (f"; {tail}." if tail else ".")


def survival(km: pd.DataFrame, out_dir: Path) -> FigureResult:
    """Kaplan–Meier survival of agent-games over rounds per schedule, one panel per model."""
    if km.empty:
        return None, "no agent-games"
    km = _with_who(km)
    all_keys = sorted(
        {(s, m) for s, m in zip(km["schedule"], km["memory"], strict=True)},
        key=lambda x: (schedule_sort_key(x[0]), x[1]),
    )
    colour = {k: f"C{i % 10}" for i, k in enumerate(all_keys)}  # one colour per schedule in every panel
    panels = []  # (model, curves): at most MAX_BANDS curves per panel, so bands stay readable
    for model in sorted(km["who"].unique()):
        sub = km[km["who"] == model]
        keys = [k for k in all_keys if ((sub["schedule"] == k[0]) & (sub["memory"] == k[1])).any()]
        parts = _chunks(keys, MAX_BANDS)
        panels += [
            (model, part, f" ({i + 1}/{len(parts)})" if len(parts) > 1 else "")
            for i, part in enumerate(parts)
        ]
    fig, axes = _grid(len(panels))
    banded = unbanded = 0
    for ax, (model, keys, part) in zip(axes, panels, strict=False):
        sub = km[km["who"] == model]
        for schedule, memory in keys:
            c = sub[(sub["schedule"] == schedule) & (sub["memory"] == memory)]
            t = np.concatenate([[0], c["time"].to_numpy()])
            s = np.concatenate([[1.0], c["survival"].to_numpy()])
            col = colour[(schedule, memory)]
            ax.step(t, s, where="post", color=col, label=f"{schedule} ({memory})")
            if c["low"].notna().all():
                lo = np.concatenate([[1.0], c["low"].to_numpy()])
                hi = np.concatenate([[1.0], c["high"].to_numpy()])
                ax.fill_between(t, lo, hi, step="post", color=col, alpha=0.15)
                banded += 1
            else:
                unbanded += 1
        ax.set_ylim(0, 1.02)
        ax.set_title(model + part, fontsize=9)
        ax.set_xlabel("rounds survived")
        ax.set_ylabel("P(alive)")
    handles, labels = _merged_legend(axes)
    order = sorted(range(len(labels)), key=lambda i: [f"{k[0]} ({k[1]})" for k in all_keys].index(labels[i]))
    name = _save(fig, out_dir, "fig_survival", ([handles[i] for i in order], [labels[i] for i in order]))
    note = _bands_note(banded, unbanded)
    split = (
        f" A model with more than {MAX_BANDS} schedules gets several panels."
        if any(p[2] for p in panels)
        else ""
    )
    return name, "Kaplan–Meier survival of the agents under test by round" + note + split


def all_figures(
    cells: list[CellResult],
    deltas: list[Delta],
    curves: pd.DataFrame,
    by_round: pd.DataFrame,
    km: pd.DataFrame,
    out_dir: Path,
) -> list[FigureResult]:
    """Draw every figure; returns (name or None, caption or reason) per figure."""
    del cells
    return [
        verification_by_round(by_round, out_dir),
        per_game_bars(curves, out_dir),
        two_axis_scatter(deltas, out_dir),
        recovery(curves, out_dir),
        survival(km, out_dir),
    ]
