"""Gather every figure of the trust card, per subject (a model, or the offline agents), from run directories
and reference logs, through the analyses' own APIs (``analysis.<family>.analyse``) and loaders.

A subject is a language model (named by its model label, provider prefix removed) or ``offline`` (scripted
agents: bayes, oracle, the IPD players, the trust-game players). Families a subject has no runs for are
``not run``; figures the analyses flag (fewer clusters than an interval needs, too few blueprints or
matches) are ``underpowered`` with the sample size.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.calibration.load import model_label
from analysis.card import escape
from analysis.card.figures import Figure, from_values, not_run, unavailable
from analysis.rundirs import describe_weak, discover_runs, flagged_weak, read_table

OFFLINE = "offline"
FAMILIES = ("escape_room", "reliance", "arena", "trust_game")
FAMILY_TITLES = {
    "escape_room": "Escape room",
    "reliance": "Reliance",
    "arena": "Arena (iterated PD)",
    "trust_game": "Trust game",
}
SCRIPTED = {"", "scripted", "nan", "none"}
SECRET_HINTS = ("key", "token", "secret", "password")


@dataclass
class Subject:
    """One card: its name, how its rows are recognised in the tables, and what was found."""

    name: str
    llm: bool
    agents: set[str] = field(default_factory=set)  # offline: the agents' names
    runs: list[dict[str, Any]] = field(default_factory=list)  # manifests
    figures: dict[str, Figure] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    reliability: list[dict[str, float]] = field(default_factory=list)
    reference: bool = False
    lineup: dict[str, set[str]] = field(default_factory=dict)  # offline: family -> the agents that played it
    notes: list[str] = field(
        default_factory=list
    )  # what was not pooled, and why (printed, shown on the card)

    def matches(self, model: Any, agent: Any = "") -> bool:
        m, a = str(model if model is not None else ""), str(agent if agent is not None else "")
        if self.llm:
            return model_label(m) == self.name
        if m.startswith("scripted:"):
            a, m = m.split(":", 1)[1], "scripted"
        return m.lower() in SCRIPTED and (a in self.agents or a.removeprefix("ipd_") in self.agents)


def _llm_roles(cfg: dict[str, Any]) -> bool:
    agent = (cfg.get("agent") or {}).get("name")
    game = cfg.get("game") or {}
    roles = [game.get("trustor"), game.get("trustee")] if game.get("type") == "trust_game" else []
    return agent == "llm" or any(
        r == "llm" or (isinstance(r, dict) and r.get("name") == "llm") for r in roles
    )


def _agent(manifest: dict[str, Any]) -> str:
    return str(((manifest.get("config") or {}).get("agent") or {}).get("name") or "")


def _battery(manifest: dict[str, Any]) -> dict[str, str]:
    """The run's trust-card battery keys (``size``, ``part``, ``family``); empty outside a battery."""
    card = (manifest.get("config") or {}).get("card") or {}
    return {k: str(card[k]) for k in ("size", "part", "family") if card.get(k)} if card.get("part") else {}


def _offline_lineups(scripted: list[tuple[str, str, Any]]) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Which card each (family, scripted agent) goes to, and what was split off (one line each).

    ``scripted`` holds (agent, family, manifest) per run. The ``offline`` card pools one agent per game family
    (the battery's lineup: bayes, oracle, an IPD player, a trust-game player). When a family holds runs of
    several scripted agents, their numbers are never pooled: the agent the trust-card battery played stays on
    the ``offline`` card and every other one gets a card of its own (``offline-<agent>``).
    """
    by_family: dict[str, dict[str, bool]] = {}  # family -> agent -> played in a battery
    for agent, family, manifest in scripted:
        seen = by_family.setdefault(family, {})
        seen[agent] = seen.get(agent, False) or bool(_battery(manifest))
    card_of: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    for family, agents in sorted(by_family.items()):
        in_battery = [a for a, battery in agents.items() if battery]
        keep = next(iter(agents)) if len(agents) == 1 else (in_battery[0] if len(in_battery) == 1 else None)
        split = sorted(a for a in agents if a != keep)
        for agent in agents:
            card_of[(family, agent)] = OFFLINE if agent == keep else f"{OFFLINE}-{agent}"
        if split:
            title = FAMILY_TITLES.get(family, family).lower()
            own = ", ".join(f"{a} ({OFFLINE}-{a})" for a in split)
            notes.append(
                f"{title}: {own} on {'its' if len(split) == 1 else 'their'} own card, not pooled with "
                + (
                    f"{keep} (the trust-card battery's agent)"
                    if keep
                    else "each other (no trust-card battery run)"
                )
            )
    return card_of, notes


def subjects_from_runs(paths: Sequence[str | os.PathLike[str]]) -> dict[str, Subject]:
    """One subject per model (LLM runs); scripted agents' runs on the ``offline`` card, one agent per game
    family (see :func:`_offline_lineups`; the split is printed and shown on the cards)."""
    found = discover_runs(paths)
    out: dict[str, Subject] = {}
    card_of, notes = _offline_lineups(
        [(_agent(r.manifest), str(r.manifest.get("game")), r.manifest) for r in found.runs
         if not _llm_roles(r.manifest.get("config") or {})]
    )  # fmt: skip
    for run in found.runs:
        m = run.manifest
        cfg = m.get("config") or {}
        if _llm_roles(cfg):
            model = cfg.get("model") or {}
            name = model_label(model.get("name") or (m.get("cell") or {}).get("model") or "?")
            subject = out.setdefault(name, Subject(name, True))
        else:
            agent = _agent(m)
            name = card_of[(str(m.get("game")), agent)]
            subject = out.setdefault(name, Subject(name, False))
            subject.agents |= {agent, agent.removeprefix("ipd_")}
            subject.lineup.setdefault(str(m.get("game")), set()).add(agent)
        subject.runs.append({**m, "_path": str(run.path), "_run": run})
    for s in out.values():
        s.notes = [n for n in notes if not s.llm]
    return out


def _rows(
    table: pd.DataFrame | None, subject: Subject, model: str = "model", agent: str = "agent"
) -> pd.DataFrame:
    if table is None or table.empty or model not in table.columns:
        return pd.DataFrame()
    agents = table[agent] if agent in table.columns else pd.Series([""] * len(table), index=table.index)
    keep = [subject.matches(mv, av) for mv, av in zip(table[model], agents, strict=True)]
    return table[keep]


def _system_rows(table: pd.DataFrame | None, subject: Subject) -> pd.DataFrame:
    """Rows of a reliance table (``system`` = the model for LLM runs, the agent for scripted ones)."""
    if table is None or table.empty or "system" not in table.columns:
        return pd.DataFrame()
    names = table["system"].astype(str)
    keep = names.map(model_label) == subject.name if subject.llm else names.isin(subject.agents)
    return table[keep]


def _analyse(family: str, paths: list[str], **options: Any) -> dict[str, pd.DataFrame] | None:
    import importlib

    from analysis.api import AnalysisError

    module = importlib.import_module(f"analysis.{family}")
    try:
        return module.analyse(paths, **options).tables  # type: ignore[attr-defined]
    except AnalysisError:
        return None


def _fig_row(key: str, label: str, row: pd.Series | None, col: str, **kw: Any) -> Figure:
    if row is None:
        return not_run(key, label)
    note = str(row.get("note", "") if isinstance(row.get("note", ""), str) else "")
    return from_values(
        key, label, row.get(col), row.get(f"{col}_low"), row.get(f"{col}_high"), note=note, **kw
    )


# ---------------------------------------------------------------- escape room


def escape_room(subject: Subject, tables: dict[str, pd.DataFrame] | None, games: pd.DataFrame, *, resamples: int,
                seed: int) -> dict[str, Figure]:  # fmt: skip
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
    formation = _rows(tables.get("trust_formation"), subject)
    if not formation.empty and "memory" in formation.columns:
        formation = formation.sort_values("memory", key=lambda s: s != "transcript")
    row = formation.iloc[0] if not formation.empty else None
    out["delta_trust"] = _with_anchor_note(
        _fig_row("delta_trust", keys["delta_trust"], row, "delta_trust"), row
    )
    target = _rows(tables.get("culprit_targeting"), subject)
    if not target.empty and "memory" in target.columns:
        target = target.sort_values("memory", key=lambda s: s != "transcript")
    trow = target.iloc[0] if not target.empty else None
    out["delta_target"] = _with_anchor_note(
        _fig_row("delta_target", keys["delta_target"], trow, "delta_target"), trow
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


def yardstick_decisions(paths: list[str]) -> pd.DataFrame | None:
    """Every escape-room decision scored by the model-based yardstick (``analysis.yardstick``; prior
    Beta(1, 1), team variant); None when it cannot score these paths."""
    try:
        from analysis.yardstick.pipeline import decisions_table, load
    except ModuleNotFoundError:
        return None
    from analysis.rundirs import RunDirError

    try:
        loaded = load(paths)
    except RunDirError:
        return pd.DataFrame()
    decisions, _ = decisions_table(loaded.runs, prior=(1.0, 1.0), variant="team")
    return decisions


def yardstick(
    subject: Subject, decisions: pd.DataFrame | None, *, resamples: int, seed: int
) -> dict[str, Figure]:
    """Escape-room regret and protective share under the yardstick (issue 14 item 2)."""
    from analysis.stats import cluster_bootstrap_mean, cluster_bootstrap_ratio

    rk, rl = "er_regret", "regret under the yardstick (expected coins; model-based, not the exact optimum)"
    pk, pl = "protective_share", "protective share of verifications (yardstick: EV-positive)"
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
    note = f"{n} decisions, {iv.n_clusters} clusters; prior Beta(1, 1)"
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


# ---------------------------------------------------------------- reliance


def reliance(subject: Subject, tables: dict[str, pd.DataFrame] | None, stages: pd.DataFrame, *, resamples: int,
             seed: int) -> dict[str, Figure]:  # fmt: skip
    keys = {
        "rel_macro_accuracy": "macro accuracy (main library)",
        "rel_all_stage_success": "all-stage success",
        "rel_normalised_regret": "normalised regret",
        "rel_test_use": "test use (share of decisions that test)",
        "rel_pairs_relation": "pairs: relation agreement",
    }
    if tables is None:
        return {k: not_run(k, v) for k, v in keys.items()}
    out: dict[str, Figure] = {}
    main = _system_rows(tables.get("main_metrics"), subject)
    row = main.iloc[0] if not main.empty else None
    for col in ("macro_accuracy", "all_stage_success", "normalised_regret"):
        k = f"rel_{col}"
        n = int(row["blueprints"]) if row is not None and pd.notna(row.get("blueprints")) else None
        out[k] = _fig_row(k, keys[k], row, col, n=n)
    sub = stages[[subject.matches(m, a) for m, a in zip(stages["model"], stages["agent"], strict=True)]] if len(
        stages) else stages  # fmt: skip
    sub = sub[sub["set"].astype(str) == "main"] if len(sub) else sub
    if len(sub):
        from analysis.stats import cluster_bootstrap_mean

        iv = cluster_bootstrap_mean(sub["is_test"].astype(bool).astype(float).to_numpy(),
                                    sub["blueprint"].astype(str).to_numpy(), n_resamples=resamples, seed=seed)  # fmt: skip
        nb = sub["blueprint"].nunique()
        out["rel_test_use"] = from_values("rel_test_use", keys["rel_test_use"], iv.estimate, iv.low, iv.high,
                                          n=nb, note=f"{len(sub)} decisions, {nb} blueprints" + (
                                              f"; {iv.note}" if iv.note else ""),
                                          underpowered=nb < 10 or iv.low != iv.low)  # fmt: skip
    else:
        out["rel_test_use"] = not_run("rel_test_use", keys["rel_test_use"])
    pairs = _system_rows(tables.get("pairs"), subject)
    rel = pairs[pairs["metric"] == "relation_agreement"] if not pairs.empty else pairs
    if rel.empty:
        out["rel_pairs_relation"] = not_run("rel_pairs_relation", keys["rel_pairs_relation"])
    else:
        r = rel.iloc[0]
        n = int(r["n"]) if pd.notna(r["n"]) else 0
        out["rel_pairs_relation"] = from_values(
            "rel_pairs_relation", keys["rel_pairs_relation"], r["share"], r["low"], r["high"], n=n,
            note=f"{int(r['k'])}/{n} pairs (Wilson interval)", underpowered=n < 10,
        )  # fmt: skip
    return out


# ---------------------------------------------------------------- arena


def arena(subject: Subject, tables: dict[str, pd.DataFrame] | None) -> dict[str, Figure]:
    keys = {
        "arena_cooperation": "cooperation",
        "arena_retaliation": "retaliation",
        "arena_forgiveness": "forgiveness",
        "arena_rank": "score rank among the scripted players",
    }
    t = tables.get("tournament") if tables else None
    rows = _rows(t, subject, "model", "player") if t is not None else pd.DataFrame()
    if rows.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    row = rows.sort_values("matches", ascending=False).iloc[0]
    n = int(row["matches"])
    under = not bool(row.get("ranked", True))
    out = {
        k: _fig_row(k, keys[k], row, k.removeprefix("arena_"), n=n, underpowered=under or None)
        for k in ("arena_cooperation", "arena_retaliation", "arena_forgiveness")
    }
    field_ = t[t["matches"] > 0]
    rank = int((field_["payoff_per_round"] > row["payoff_per_round"]).sum()) + 1
    total = len(field_)
    note = f"payoff/round {row['payoff_per_round']:.2f} among {total} players"
    if under:
        note += f"; {row.get('note', '')}"
    out["arena_rank"] = from_values(
        "arena_rank", keys["arena_rank"], rank, row.get("rank_low"), row.get("rank_high"), n=n, note=note,
        underpowered=under, digits=0, unit=f" of {total}",
    )  # fmt: skip
    return out


# ---------------------------------------------------------------- trust game


def trust_game(subject: Subject, tables: dict[str, pd.DataFrame] | None) -> dict[str, Figure]:
    keys = {"tg_sent_fraction": "sent fraction (as trustor)", "tg_return_ratio": "return ratio (as trustee)"}
    summary = tables.get("summary") if tables else None
    comparison = tables.get("reference_comparison") if tables else None
    if summary is None or summary.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    out: dict[str, Figure] = {}
    for key, role, other, col, measure in (
        ("tg_sent_fraction", "trustor", "trustee", "sent_fraction", "sent fraction (first round)"),
        ("tg_return_ratio", "trustee", "trustor", "return_ratio_pooled", "return ratio (pooled)"),
    ):
        mine = _rows(summary, subject, f"{role}_model", role)
        mine = mine[mine[other].astype(str) == "tg_human"] if not mine.empty else mine
        if mine.empty:
            out[key] = not_run(key, keys[key])
            continue
        row = mine.iloc[0]
        ref = ""
        if comparison is not None and not comparison.empty:
            c = comparison[(comparison[role] == row[role]) & (comparison[other] == row[other])
                           & (comparison["measure"] == measure)]  # fmt: skip
            if not c.empty:
                ref = (
                    f"human {c.iloc[0]['reference_value']:.2f} ({str(c.iloc[0]['reference']).split(',')[0]})"
                )
        n = int(row["pairs"])
        out[key] = _fig_row(key, keys[key], row, col, n=n, reference=ref, underpowered=n < 10 or None)
    return out


# ---------------------------------------------------------------- calibration


def calibration(
    subject: Subject, predictions: pd.DataFrame, *, resamples: int, seed: int
) -> dict[str, Figure]:
    keys = {
        "cal_brier": "Brier score (all games)",
        "cal_ece": "ECE (10 equal-width bins)",
        "cal_bias": "over(+)/under(−) confidence: mean p − observed",
    }
    if predictions.empty:
        return {k: not_run(k, v) for k, v in keys.items()}
    sub = predictions[
        [subject.matches(m, a) for m, a in zip(predictions["model"], predictions["agent"], strict=True)]
    ]
    sub = sub[sub["p"].notna()]
    if sub.empty:
        return {k: not_run(k, v, "no stated probabilities") for k, v in keys.items()}
    from analysis.calibration.intervals import bootstrap_measures

    p, y = sub["p"].to_numpy(float), sub["outcome"].to_numpy(float)
    iv = bootstrap_measures(p, y, sub["cluster_key"].to_numpy(), n_resamples=resamples, seed=seed, full=False)
    n = len(sub)
    clusters = sub["cluster_key"].nunique()
    games = ", ".join(f"{g} {c}" for g, c in sub["game_type"].value_counts().sort_index().items())
    note = f"{n} predictions in {clusters} clusters ({games})"
    out = {}
    for key, name in (("cal_brier", "brier"), ("cal_ece", "ece_width"), ("cal_bias", "bias")):
        i = iv.get(name)
        if i is None:
            out[key] = unavailable(key, keys[key], f"{name} not computed")
            continue
        out[key] = from_values(key, keys[key], i.estimate, i.low, i.high, n=n, note=note + (f"; {i.note}" if i.note else ""),
                               underpowered=clusters < 10 or None, digits=3)  # fmt: skip
    bins = np.clip((p * 10).astype(int), 0, 9)
    subject.reliability = [
        {"bin": int(b), "count": int((bins == b).sum()), "mean_p": float(p[bins == b].mean()),
         "observed": float(y[bins == b].mean())}
        for b in range(10) if (bins == b).any()
    ]  # fmt: skip
    return out


# ---------------------------------------------------------------- provenance


def _invalid_share(run: dict[str, Any], subject: Subject) -> tuple[int, int]:
    game = run.get("game")

    def table(name: str) -> pd.DataFrame:
        t = read_table(run["_run"], f"{name}.csv", cell_keys=False)
        return t if t is not None else pd.DataFrame(columns=["valid"])

    try:
        if game == "escape_room":
            t = table("decisions")
            t = t[~t["is_partner"].astype(str).str.lower().isin(["true", "1"])]
            col = t["valid"]
        elif game == "reliance":
            col = table("stages")["valid"]
        elif game == "arena":
            t = table("moves")
            t = t[[subject.matches(m, a) for m, a in zip(t["model"], t["player"], strict=True)]]
            col = t["valid"]
        elif game == "trust_game":
            t = table("exchanges")
            cols = []
            if len(t) and subject.matches(t["trustor_model"].iloc[0], t["trustor"].iloc[0]):
                cols.append(t["sent_valid"])
            if len(t) and subject.matches(t["trustee_model"].iloc[0], t["trustee"].iloc[0]):
                cols.append(
                    t["returned_valid"][t["trustee_asked"].astype(str).str.lower().isin(["true", "1"])]
                )
            col = pd.concat(cols) if cols else pd.Series([], dtype=object)
        else:
            return 0, 0
    except Exception:  # a damaged or foreign table: leave it out of the share
        return 0, 0
    valid = col.astype(str).str.lower().isin(["true", "1"])
    return int((~valid).sum()), len(valid)


def _model_settings(cfg: dict[str, Any]) -> dict[str, Any]:
    model = dict(cfg.get("model") or {})
    return {k: v for k, v in model.items() if not any(h in k.lower() for h in SECRET_HINTS) and v is not None}


def provenance(subject: Subject) -> dict[str, Any]:
    runs = subject.runs
    if not runs:
        return {}
    first = runs[0].get("config") or {}
    versions = sorted(
        {str((r.get("versions") or {}).get("trustsim") or r.get("trustsim_version")) for r in runs}
    )
    revisions = sorted({
        f"{str((r.get('git') or {}).get('revision') or '?')[:10]}{'+dirty' if (r.get('git') or {}).get('dirty') else ''}"
        for r in runs
    })  # fmt: skip
    started = sorted(str((r.get("timings") or {}).get("started") or "") for r in runs if r.get("timings"))
    finished = sorted(str((r.get("timings") or {}).get("finished") or "") for r in runs if r.get("timings"))
    llm = [r.get("llm") or {} for r in runs]
    tokens_in = sum(int(x.get("prompt_tokens") or 0) for x in llm)
    tokens_out = sum(int(x.get("completion_tokens") or 0) for x in llm)
    cost = sum(float(x.get("cost_usd") or 0.0) for x in llm)
    sent = sum(int(x.get("calls_sent") or 0) for x in llm)
    cached = sum(int(x.get("cache_hits") or 0) for x in llm)
    counts: dict[str, dict[str, int]] = {}
    invalid: dict[str, list[int]] = {}
    for r in runs:
        fam = str(r.get("game"))
        c = counts.setdefault(fam, {})
        for k, v in (r.get("counts") or {}).items():
            if isinstance(v, int | float):
                c[k] = c.get(k, 0) + int(v)
        bad, total = _invalid_share(r, subject)
        acc = invalid.setdefault(fam, [0, 0])
        acc[0] += bad
        acc[1] += total
    flagged = [name for r in runs for name in flagged_weak(r)]
    answers = sum(total for _, total in invalid.values())
    agents = sorted({str(((r.get("config") or {}).get("agent") or {}).get("name")) for r in runs})
    return {
        "model": _model_settings(first) if subject.llm else {"agents": ", ".join(sorted(agents))},
        "trustsim": ", ".join(versions),
        "git": ", ".join(revisions),
        "dates": f"{started[0][:10] if started else '?'} – {finished[-1][:10] if finished else '?'}",
        "battery_size": battery_label(runs),
        "battery_runs": sum(bool(_battery(r)) for r in runs),
        "runs": len(runs),
        "sample": {fam: counts[fam] for fam in sorted(counts)},
        "llm_calls": f"{sent:,} sent, {cached:,} replayed",
        "tokens": f"{tokens_in:,} in / {tokens_out:,} out",
        "cost_usd": cost,
        "invalid": {fam: v for fam, v in sorted(invalid.items())},
        "weak": describe_weak(flagged, answers, sum(bad for bad, _ in invalid.values())) or "",
    }


def battery_label(runs: Sequence[dict[str, Any]]) -> str:
    """What the runs hold of the trust-card battery, counted: per size the parts found, plus the runs that
    belong to no battery (``smoke, 11 parts``; ``mixed sizes: small, 11 parts; smoke, 3 parts + 4 run(s)
    outside a battery``)."""
    parts: dict[str, set[str]] = {}
    outside = 0
    for r in runs:
        battery = _battery(r)
        if battery:
            parts.setdefault(battery.get("size", "?"), set()).add(battery["part"])
        else:
            outside += 1
    if not parts:
        return "(not a battery run)"
    text = "; ".join(
        f"{size}, {len(p)} part{'s' if len(p) != 1 else ''}" for size, p in sorted(parts.items())
    )
    if len(parts) > 1:
        text = f"mixed sizes: {text}"
    return text + (f" + {outside} run(s) outside a battery" if outside else "")


def reference_provenance(subject: Subject, games: pd.DataFrame, decisions: pd.DataFrame) -> dict[str, Any]:
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


# ---------------------------------------------------------------- everything


def collect(
    paths: Iterable[str | os.PathLike[str]],
    *,
    reference: Path | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Subject]:
    """Every subject's figures from run/sweep directories (and the reference logs when given)."""
    from analysis.trust.loader import load_trust_data

    run_paths = [str(p) for p in paths]
    subjects = subjects_from_runs(run_paths) if run_paths else {}
    trust_paths = [*run_paths, *([str(reference)] if reference else [])]
    trust_tables: dict[str, pd.DataFrame] | None = None
    games = decisions = pd.DataFrame()
    if trust_paths:
        trust_tables = _analyse("trust", trust_paths, resamples=resamples, seed=seed, quiet=True)
        if trust_tables is not None:
            data = load_trust_data(trust_paths)
            games, decisions = data.games, data.decisions
    if reference is not None and not games.empty:
        ref_games = games[games["source"].astype(str) != "trustsim"] if "source" in games.columns else games
        for model in sorted(ref_games["model"].astype(str).unique()):
            label = model_label(model)
            s = subjects.setdefault(label, Subject(label, True))
            s.reference = True
    if not subjects:
        from analysis.rundirs import RunDirError

        raise RunDirError("no runs and no reference logs to make a card from")
    fam_paths = {fam: [p for p in run_paths] for fam in FAMILIES}
    present = {str(r.get("game")) for s in subjects.values() for r in s.runs}
    rel_tables = (
        _analyse("reliance", fam_paths["reliance"], resamples=resamples, seed=seed)
        if "reliance" in present
        else None
    )
    stages = pd.DataFrame()
    if rel_tables is not None:
        from analysis.reliance.load import load as load_reliance

        stages = load_reliance(run_paths).stages
    arena_tables = (
        _analyse("arena", run_paths, resamples=resamples, seed=seed) if "arena" in present else None
    )
    tg_tables = (
        _analyse("trust_game", run_paths, resamples=resamples, seed=seed) if "trust_game" in present else None
    )
    predictions = pd.DataFrame()
    if trust_paths:
        from analysis.calibration.load import load_predictions
        from analysis.rundirs import RunDirError

        try:
            predictions, _ = load_predictions(run_paths) if run_paths else (pd.DataFrame(), None)
        except RunDirError:
            predictions = pd.DataFrame()
    ys_decisions = yardstick_decisions(trust_paths) if trust_paths and not games.empty else None
    for s in subjects.values():
        sub_games = games[[s.matches(m, a) for m, a in zip(games["model"], games["agent"], strict=True)]] if len(
            games) else games  # fmt: skip
        s.figures.update(escape_room(s, trust_tables, sub_games, resamples=resamples, seed=seed))
        if not sub_games.empty:  # the yardstick's protective share replaces the trust analysis's
            s.figures.update(yardstick(s, ys_decisions, resamples=resamples, seed=seed))
        else:
            s.figures["er_regret"] = not_run("er_regret", "regret under the yardstick")
        s.figures.update(reliance(s, rel_tables, stages, resamples=resamples, seed=seed))
        s.figures.update(arena(s, arena_tables))
        s.figures.update(trust_game(s, tg_tables))
        s.figures.update(calibration(s, predictions, resamples=resamples, seed=seed))
        if s.runs:
            s.provenance = provenance(s)
        else:
            sub_dec = decisions[
                [s.matches(m, a) for m, a in zip(decisions["model"], decisions["agent"], strict=True)]
            ]
            sub_dec = sub_dec[~sub_dec["is_partner"].astype(bool)] if len(sub_dec) else sub_dec
            s.provenance = reference_provenance(s, sub_games, sub_dec)
    return sorted(subjects.values(), key=lambda s: (not s.llm, s.name != OFFLINE, s.name))
