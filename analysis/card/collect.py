"""Gather every figure of the trust card, per subject (a model, or the offline agents), from run directories
and reference logs, through the analyses' own APIs (``analysis.<family>.analyse``) and loaders.

A subject is a language model (named by its model label, provider prefix removed) or ``offline`` (scripted
agents: bayes, oracle, the IPD players, the trust-game players). Families a subject has no runs for are
``not run``; figures the analyses flag (fewer clusters than an interval needs, too few blueprints or
matches) are ``underpowered`` with the sample size.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.calibration.intervals import bootstrap_measures
from analysis.calibration.load import load_predictions, model_label
from analysis.card.figures import Figure, from_values, not_run, unavailable
from analysis.family_registry import CardData, families
from analysis.family_registry import title as family_title
from analysis.rundirs import RunDirError, describe_weak, discover_runs, flagged_weak

OFFLINE = "offline"
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


def _llm_roles(manifest: dict[str, Any]) -> bool:
    """Whether a run's subject is a language model: the ``agent`` group's agent is ``llm``, or the run's family
    says another player of the run is (its :attr:`~analysis.family_registry.CardSection.llm_run`)."""
    cfg = manifest.get("config") or {}
    if (cfg.get("agent") or {}).get("name") == "llm":
        return True
    family = families().get(str(manifest.get("game")))
    section = family.card if family is not None else None
    return bool(section is not None and section.llm_run is not None and section.llm_run(cfg))


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
            title = family_title(family).lower()
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
         if not _llm_roles(r.manifest)]
    )  # fmt: skip
    for run in found.runs:
        m = run.manifest
        cfg = m.get("config") or {}
        if _llm_roles(m):
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


# ---------------------------------------------------------------- calibration


CALIBRATION_KEYS = ("cal_brier", "cal_ece", "cal_bias")
"""The calibration section's figures (every game's stated probabilities: predictions.csv)."""


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


def _invalid(run: dict[str, Any], subject: Subject) -> tuple[int, int]:
    """(invalid answers, answers) of the subject in one run: its family's count (none without one)."""
    family = families().get(str(run.get("game")))
    if family is None or family.card is None or family.card.invalid is None:
        return 0, 0
    try:
        return family.card.invalid(run["_run"], subject)
    except Exception:  # a damaged or foreign table: leave it out of the share
        return 0, 0


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
    revisions = sorted(
        {
            f"{str((r.get('git') or {}).get('revision') or '?')[:10]}{'+dirty' if (r.get('git') or {}).get('dirty') else ''}"
            for r in runs
        }
    )
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
        bad, total = _invalid(r, subject)
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


# ---------------------------------------------------------------- everything


def collect(
    paths: Iterable[str | os.PathLike[str]],
    *,
    reference: Path | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Subject]:
    """Every subject's figures from run/sweep directories (and the reference logs when given): each declared
    family's card section (:mod:`analysis.family_registry`), then calibration across all games."""
    run_paths = [str(p) for p in paths]
    subjects = subjects_from_runs(run_paths) if run_paths else {}
    present = {str(r.get("game")) for s in subjects.values() for r in s.runs}
    data = CardData(run_paths, reference, present, resamples, seed)
    sections = [f.card for f in families().values() if f.card is not None]
    for section in sections:
        for name in section.subjects(data) if section.subjects is not None else ():
            subjects.setdefault(name, Subject(name, True)).reference = True
    if not subjects:
        raise RunDirError("no runs and no reference logs to make a card from")
    per_section = [section.figures(data) for section in sections]
    predictions = pd.DataFrame()
    if run_paths:
        try:
            predictions, _ = load_predictions(run_paths)
        except RunDirError:
            predictions = pd.DataFrame()
    for s in subjects.values():
        for per_subject in per_section:
            s.figures.update(per_subject(s))
        s.figures.update(calibration(s, predictions, resamples=resamples, seed=seed))
        if s.runs:
            s.provenance = provenance(s)
        else:  # a reference-log model's card
            s.provenance = next((sec.provenance(s, data) for sec in sections if sec.provenance), {})
    return sorted(subjects.values(), key=lambda s: (not s.llm, s.name != OFFLINE, s.name))
