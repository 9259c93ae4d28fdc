"""The escape room's section of the trust card: trust formation, breakage, recovery, targeting, the yardstick's
regret and protective share (from this package's trust analysis), and the cards of the reference logs' models."""

from __future__ import annotations

import functools
import math
from typing import Any

import pandas as pd

from analysis.calibration.load import model_label
from analysis.card import escape
from analysis.card.figures import (
    Figure,
    analysis_tables,
    figure_from_row,
    from_values,
    not_run,
    rows_of,
    unavailable,
    valid_share,
)
from analysis.family_registry import CardData
from analysis.rundirs import RunDirError, describe_weak, read_table

GAME = "escape_room"
KEYS = (
    "delta_trust",
    "breakage",
    "recovery",
    "delta_target",
    "protective_share",
    "er_regret",
    "er_regret_self_reliant",
    "er_regret_symmetric",
)
REGRET_VARIANTS = {  # figure key -> (yardstick variant, its assumption in one line)
    "er_regret": (
        "team",
        "level 1: teammates follow the bayes rule (verify if (1 − p) × coins > 1, else volunteer)",
    ),
    "er_regret_self_reliant": ("self_reliant", "teammates pass: the seat counts on nobody"),
    "er_regret_symmetric": (
        "symmetric",
        "symmetric: teammates play the seat's own best-response policy (where best responses reach a fixed point)",
    ),
}


@functools.cache
def _trust(paths: tuple[str, ...], resamples: int, seed: int) -> tuple[Any, pd.DataFrame, pd.DataFrame]:
    """The trust analysis's tables and the games and decisions it loaded (None and empty frames: nothing)."""
    from analysis.escape_room.loader import load_trust_data

    if not paths:
        return None, pd.DataFrame(), pd.DataFrame()
    tables = analysis_tables("escape_room", list(paths), resamples=resamples, seed=seed)
    if tables is None:
        return None, pd.DataFrame(), pd.DataFrame()
    data = load_trust_data(list(paths))
    return tables, data.games, data.decisions


def _paths(data: CardData) -> tuple[str, ...]:
    return (*data.run_paths, *([str(data.reference)] if data.reference else []))


def _mine(frame: pd.DataFrame, subject: Any) -> pd.DataFrame:
    if not len(frame):
        return frame
    return frame[[subject.matches(m, a) for m, a in zip(frame["model"], frame["agent"], strict=True)]]


def figures(data: CardData) -> Any:
    """Per subject: the escape-room figures (``not run`` without games of its own)."""
    tables, games, _ = _trust(_paths(data), data.resamples, data.seed)
    scored = _paths(data) and not games.empty
    ys = {
        v: yardstick_decisions(list(_paths(data)), v) if scored else None for v, _ in REGRET_VARIANTS.values()
    }

    def per_subject(subject: Any) -> dict[str, Figure]:
        sub_games = _mine(games, subject)
        out = escape_room(subject, tables, sub_games, resamples=data.resamples, seed=data.seed)
        if not sub_games.empty:  # the yardstick's protective share replaces the trust analysis's
            out.update(yardstick(subject, ys["team"], resamples=data.resamples, seed=data.seed))
            for key in ("er_regret_self_reliant", "er_regret_symmetric"):
                out[key] = regret_figure(
                    subject, ys[REGRET_VARIANTS[key][0]], key, resamples=data.resamples, seed=data.seed
                )
        else:
            for key in REGRET_VARIANTS:
                out[key] = not_run(key, "regret under the yardstick")
        return out

    return per_subject


def subjects(data: CardData) -> list[str]:
    """The models of the reference logs (a card each, when ``--reference`` is given)."""
    if data.reference is None:
        return []
    _, games, _ = _trust(_paths(data), data.resamples, data.seed)
    if games.empty:
        return []
    ref_games = games[games["source"].astype(str) != "trustsim"] if "source" in games.columns else games
    return [model_label(m) for m in sorted(ref_games["model"].astype(str).unique())]


def provenance(subject: Any, data: CardData) -> dict[str, Any]:
    """The provenance of a reference-log model's card."""
    _, games, decisions = _trust(_paths(data), data.resamples, data.seed)
    sub_dec = _mine(decisions, subject)
    sub_dec = sub_dec[~sub_dec["is_partner"].astype(bool)] if len(sub_dec) else sub_dec
    return reference_provenance(subject, _mine(games, subject), sub_dec)


def invalid(run: Any, subject: Any) -> tuple[int, int]:
    """Invalid answers of the tested seats (not the scripted partner) of one run."""
    table = read_table(run, "decisions.csv", cell_keys=False)
    if table is None:
        return 0, 0
    return valid_share(table[~table["is_partner"].astype(str).str.lower().isin(["true", "1"])]["valid"])


def escape_room(
    subject: Any, tables: dict[str, pd.DataFrame] | None, games: pd.DataFrame, *, resamples: int, seed: int
) -> dict[str, Figure]:
    keys = {
        "delta_trust": "formation: Δtrust (smooth − anchor, verifications/game)",
        "delta_target": "targeting: Δtarget (1strike − anchor, partner share)",
        "breakage": "breakage: Δ verifications/game after the first strike",
        "recovery": "recovery: games until volume is back within the anchor's interval",
        "protective_share": "protective share of verifications",
    }
    if tables is None or games.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    out: dict[str, Figure] = {}
    formation = rows_of(tables.get("trust_formation"), subject)
    if not formation.empty and "memory" in formation.columns:
        formation = formation.sort_values("memory", key=lambda s: s != "transcript")
    row = formation.iloc[0] if not formation.empty else None
    out["delta_trust"] = _with_anchor_note(
        figure_from_row("delta_trust", keys["delta_trust"], row, "delta_trust"), row
    )
    target = rows_of(tables.get("culprit_targeting"), subject)
    if not target.empty and "memory" in target.columns:
        target = target.sort_values("memory", key=lambda s: s != "transcript")
    trow = target.iloc[0] if not target.empty else None
    out["delta_target"] = _with_anchor_note(
        figure_from_row("delta_target", keys["delta_target"], trow, "delta_target"), trow
    )
    out["breakage"] = escape.breakage(games, resamples=resamples, seed=seed)
    anchor = float(row["anchor"]) if row is not None and pd.notna(row.get("anchor")) else math.nan
    high = float(row["anchor_high"]) if row is not None and pd.notna(row.get("anchor_high")) else math.nan
    out["recovery"] = escape.recovery(games, anchor, high, resamples=min(resamples, 2000), seed=seed)
    out["protective_share"] = escape.protective_share(games, resamples=resamples, seed=seed)
    return out


def _with_anchor_note(fig: Figure, row: pd.Series | None) -> Figure:
    """Say what the delta compares: the cell's value, the anchor's and where the anchor comes from."""
    from dataclasses import replace

    if row is None or fig.status == "not run":
        return fig
    cell = "smooth" if fig.key == "delta_trust" else "1strike"
    source = str(row.get("anchor_source", "") or "")
    source = (
        "published point value" if source.startswith("published") else source.split("(")[0].strip() or "?"
    )
    parts = [f"{cell} {float(row[cell]):.2f}" if pd.notna(row.get(cell)) else f"{cell} n/a"]
    parts.append(
        f"anchor {float(row['anchor']):.2f} ({source})" if pd.notna(row.get("anchor")) else "no anchor"
    )
    note = " − ".join(parts)
    if fig.status != "ok" and fig.note:
        note += f"; {fig.note}"
    return replace(fig, note=note)


@functools.cache
def _loaded(paths: tuple[str, ...]) -> Any:
    from analysis.yardstick.pipeline import load

    return load(list(paths))


def yardstick_decisions(paths: list[str], variant: str = "team") -> pd.DataFrame | None:
    """Every escape-room decision scored by the model-based yardstick (``analysis.yardstick``, its current
    model; prior Beta(1, 1), the ``variant``); None when it cannot score these paths."""
    try:
        from analysis.yardstick.pipeline import decisions_table
    except ModuleNotFoundError:
        return None
    try:
        loaded = _loaded(tuple(paths))
    except RunDirError:
        return pd.DataFrame()
    decisions, _ = decisions_table(loaded.runs, prior=(1.0, 1.0), variant=variant)
    return decisions


def regret_figure(
    subject: Any, decisions: pd.DataFrame | None, key: str, *, resamples: int, seed: int
) -> Figure:
    """Mean regret per decision under one of the yardstick's variants (its assumption in the label); the
    symmetric benchmark's decisions without a fixed point are left out and counted in the note."""
    from analysis.stats import cluster_bootstrap_mean

    variant, assumption = REGRET_VARIANTS[key]
    label = f"regret, {assumption} (expected coins)"
    if decisions is None:
        return unavailable(key, label, "analysis.yardstick is not installed")
    sub = decisions[[subject.matches(m, a) for m, a in zip(decisions["model"], decisions["agent"], strict=True)]] if len(
        decisions) else decisions  # fmt: skip
    if sub.empty:
        return not_run(key, label)
    clusters = (sub["run_id"].astype(str) + "/" + sub["cluster"].astype(str)).to_numpy()
    regret = sub["regret"].astype(float)
    ok = regret.notna().to_numpy()
    n, left = int(ok.sum()), int((~ok).sum())
    note = f"{n} decisions" + (
        f" ({left} without a value left out: no fixed point, or too large)" if left else ""
    )
    if not n:
        return unavailable(key, label, note)
    iv = cluster_bootstrap_mean(regret.to_numpy()[ok], clusters[ok], n_resamples=resamples, seed=seed)
    note += f", {iv.n_clusters} clusters; {variant} variant" + (f"; {iv.note}" if iv.note else "")
    return from_values(key, label, iv.estimate, iv.low, iv.high, n=n, note=note,
                       underpowered=iv.n_clusters < 10 or None, digits=3)  # fmt: skip


def yardstick(
    subject: Any, decisions: pd.DataFrame | None, *, resamples: int, seed: int
) -> dict[str, Figure]:
    """Escape-room regret and protective share under the yardstick."""
    from analysis.stats import cluster_bootstrap_mean, cluster_bootstrap_ratio

    try:
        from analysis.yardstick.model import MODEL_VERSION as version
    except ModuleNotFoundError:  # the decisions are None then
        version = "(not installed)"
    rk = "er_regret"
    rl = f"regret under the yardstick {version}, {REGRET_VARIANTS[rk][1]} (expected coins; model-based, not the exact optimum)"
    pk, pl = "protective_share", f"protective share of verifications (yardstick {version}: EV-positive)"
    if decisions is None:
        return {rk: unavailable(rk, rl, "analysis.yardstick is not installed")}
    sub = decisions[[subject.matches(m, a) for m, a in zip(decisions["model"], decisions["agent"], strict=True)]] if len(
        decisions) else decisions  # fmt: skip
    if sub.empty:
        return {rk: not_run(rk, rl), pk: not_run(pk, pl)}
    clusters = (sub["run_id"].astype(str) + "/" + sub["cluster"].astype(str)).to_numpy()
    regret = sub["regret"].astype(float)
    ok = regret.notna().to_numpy()
    iv = cluster_bootstrap_mean(regret.to_numpy()[ok], clusters[ok], n_resamples=resamples, seed=seed)
    n = int(ok.sum())
    note = f"{n} decisions, {iv.n_clusters} clusters; yardstick {version}, team variant, prior Beta(1, 1)"
    out = {rk: from_values(rk, rl, iv.estimate, iv.low, iv.high, n=n, note=note + (f"; {iv.note}" if iv.note else ""),
                           underpowered=iv.n_clusters < 10 or None, digits=3)}  # fmt: skip
    verify = (sub["action"] == "verify").to_numpy()
    protective = sub["protective"].fillna(False).astype(bool).to_numpy() & verify
    per = (
        pd.DataFrame({"c": clusters, "p": protective.astype(float), "v": verify.astype(float)})
        .groupby("c")
        .sum()
    )
    share = cluster_bootstrap_ratio(
        per["p"].to_numpy(), per["v"].to_numpy(), n_resamples=resamples, seed=seed
    )
    nv = int(verify.sum())
    out[pk] = from_values(pk, pl, share.estimate, share.low, share.high, n=nv,
                          note=f"{nv} verifications, {share.n_clusters} clusters" + (f"; {share.note}" if share.note else ""),
                          underpowered=share.n_clusters < 10 or None)  # fmt: skip
    return out


def reference_provenance(subject: Any, games: pd.DataFrame, decisions: pd.DataFrame) -> dict[str, Any]:
    sub_d = decisions
    bad = int((~sub_d["valid"].astype(bool)).sum()) if len(sub_d) else 0
    return {
        "model": {"name": subject.name, "source": "reference study logs (escape-room-v2, Chen 2026, MIT)"},
        "trustsim": "analysis of shipped logs",
        "git": "n/a (logs of the reference code)",
        "dates": "as in the logs' run names",
        "battery_size": "reference study (escape room only)",
        "runs": int(games["run_id"].nunique()),
        "sample": {"escape_room": {"games": len(games), "decisions": len(sub_d)}},
        "llm_calls": "n/a (not recorded in the logs)",
        "tokens": "n/a (not recorded in the logs)",
        "cost_usd": math.nan,
        "invalid": {"escape_room": [bad, len(sub_d)]},
        "weak": describe_weak([], len(sub_d), bad) or "",
    }
