"""What a trust report cannot show yet and the command that fills each gap; the weak-model label.

The first report a user sees (one run of the default preset) has no anchor and one cluster: formation and
targeting are empty and no measure has an interval. Instead of leaving the reader with "(no rows)", the report
says which part is missing for which model or agent, and the ``python -m trustsim`` command that adds it
(built from the overrides the runs were made with, so a model chosen with ``model=...`` stays chosen); cells
without an interval point to the report's *How many sessions* section (the sessions to add and the plan
command). Runs the run summary labels weak (:mod:`trustsim.rundir.weak`) are named at the top of the report.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from analysis.escape_room.measures import CellResult
from analysis.rundirs import RunDirError, describe_weak, read_manifest
from analysis.stats import MIN_CLUSTERS

# Overrides of a recorded command that choose who plays (kept when suggesting another preset).
_WHO_PREFIXES = ("model", "agent", "llm")
_PRESET_RUNS = {"anchor": "5 runs × 10 games: the study's 50 memoryless games"}


@dataclass(frozen=True)
class Subject:
    """A model or scripted agent whose escape-room cells the report holds (``partner_slot`` kept apart)."""

    model: str
    agent: str
    partner_slot: str

    @property
    def label(self) -> str:
        who = self.agent if self.model in ("", "scripted") else self.model
        return who + (
            f" (partner slot {self.partner_slot})" if self.partner_slot not in ("", "fixed") else ""
        )


def weak_lines(runs: pd.DataFrame) -> list[str]:
    """One line per model with runs the run summary labels weak (pooled answers; see ``runs.csv``)."""
    if runs.empty or "weak" not in runs.columns:
        return []
    lines = []
    for model, grp in runs.groupby("model", sort=True):
        flagged = [n for names in grp["flagged_weak"].fillna("").astype(str) for n in names.split(";") if n]
        answers = int(pd.to_numeric(grp["answers"], errors="coerce").fillna(0).sum())
        invalid = int(pd.to_numeric(grp["invalid_answers"], errors="coerce").fillna(0).sum())
        reason = describe_weak(flagged, answers, invalid)
        if reason:
            labelled = int((grp["weak"].fillna("").astype(str) != "").sum())
            lines.append(f"- **{model}**: {reason} ({labelled} of {len(grp)} run(s) labelled weak).")
    return lines


def _command_args(path: str) -> list[str]:
    """The recorded ``python -m trustsim`` arguments of a run (empty when the manifest has none)."""
    try:
        argv = read_manifest(path).get("command") or []
    except RunDirError:  # an unreadable manifest: no command to build on
        return []
    return [str(a) for a in argv[1:]] if isinstance(argv, list) else []


def _on_embedded_model(path: str) -> bool:
    """Whether a run played the embedded model (``provider: local``): its calls take seconds each."""
    try:
        model = (read_manifest(path).get("config") or {}).get("model")
    except RunDirError:
        return False
    return isinstance(model, dict) and model.get("provider") == "local"


def _key(arg: str) -> str:
    return arg.split("=", 1)[0].lstrip("+~")


def _who_overrides(args: Iterable[str]) -> list[str]:
    return [a for a in args if "=" in a and _key(a).split(".")[0] in _WHO_PREFIXES]


def _who(s: Subject, commands: list[list[str]]) -> list[str]:
    """The overrides that chose who played: from the recorded commands, else from the cell's names."""
    recorded = [args for args in commands if args]
    if recorded:
        return next((w for w in map(_who_overrides, recorded) if w), [])
    who = [f"model={s.model}"] if s.model not in ("", "scripted") else []
    return who + ([f"agent={s.agent}"] if s.agent not in ("", "llm") else [])


def _trustsim(args: Iterable[str]) -> str:
    return "python -m trustsim " + " ".join(shlex.quote(a) for a in args)


def _subject_runs(runs: pd.DataFrame, s: Subject) -> pd.DataFrame:
    if runs.empty:
        return runs
    mine = (runs["model"] == s.model) & (runs["agent"] == s.agent) & (runs["partner_slot"] == s.partner_slot)
    return runs[mine & (runs["source"] == "trustsim")]


def gap_lines(
    cells: list[CellResult], anchors: dict, runs: pd.DataFrame, *, anchor_mode: str, inputs: list[str]
) -> list[str]:
    """What the report cannot show yet, each with the command that fills it."""
    lines: list[str] = []
    subjects = sorted(
        {Subject(c.keys["model"], c.keys["agent"], c.keys["partner_slot"]) for c in cells if not c.keys.get("team")},
        key=lambda s: (s.model, s.agent, s.partner_slot),
    )  # fmt: skip
    together = (
        "python -m analysis trust " + " ".join(shlex.quote(p) for p in inputs) + " NEW_RUN_DIR --out report/"
    )
    for s in subjects:
        mine = [c for c in cells if (c.keys["model"], c.keys["agent"], c.keys["partner_slot"]) == (s.model, s.agent, s.partner_slot)]  # fmt: skip
        own = _subject_runs(runs, s)
        if own.empty:  # the reference logs: nothing to run
            continue
        who = _who(s, [_command_args(p) for p in own["path"].astype(str)])
        memories = {c.keys["memory"] for c in mine if c.keys["memory"] != "none"}
        schedules = {c.keys["schedule"] for c in mine if c.keys["memory"] != "none"}
        missing = []
        if anchor_mode != "none" and (s.model, s.agent, s.partner_slot) not in anchors:
            missing.append(("anchor", "formation (Δtrust) and targeting (Δtarget) subtract an anchor: memoryless "
                            "games with the partner always right"))  # fmt: skip
        if "smooth" not in schedules:
            missing.append(("smooth", "formation (Δtrust) needs the smooth schedule (the partner never fails)"
                            + (f", memory {', '.join(sorted(memories))}" if memories else "")))  # fmt: skip
        if "1strike" not in schedules:
            missing.append(
                ("1strike", "targeting (Δtarget) needs the 1strike schedule (the partner fails in game 1)")
            )
        if memories and "transcript" not in memories:  # the presets play transcript memory
            who = [*who, f"memory={sorted(memories)[0]}"]
        for preset, why in missing:
            if preset == "anchor":
                args = [f"+experiment={preset}", *(w for w in who if not w.startswith("memory="))]
            else:
                args = [f"+experiment={preset}", *who]
            size = f" ({_PRESET_RUNS[preset]})" if preset in _PRESET_RUNS else ""
            lines.append(f"- **{s.label}**: {why}. Run `{_trustsim(args)}`{size}.")
        sweep = None
        if len(missing) > 1 and not any(w.startswith("memory=") for w in who):  # anchor plays memory none
            presets = ",".join(p for p, _ in missing)
            sweep = ["-m", f"+experiment={presets}", *who]
            lines.append(f"- **{s.label}**, all of these in one sweep: `{_trustsim(sweep)}`.")
        if missing and any(_on_embedded_model(p) for p in own["path"].astype(str)):
            ask = sweep or [f"+experiment={missing[0][0]}", *who]
            lines.append(
                f"- **{s.label}** runs on the embedded model, at seconds per call: `{_trustsim([*ask, 'preview=true'])}` "
                "sends nothing and prints the requests and the expected time (from the request store's measured "
                "seconds per call)."
            )
        few = sum(0 < c.n_clusters < MIN_CLUSTERS for c in mine)
        if few:
            lines.append(
                f"- **{s.label}**: {few} of {len(mine)} cell(s) have fewer than {MIN_CLUSTERS} clusters, so no "
                "interval; *How many sessions* below says what to add and how to plan for a width."
            )
    if lines:
        lines.append(f"- Then analyse the new runs together with these: `{together}`.")
    return lines
