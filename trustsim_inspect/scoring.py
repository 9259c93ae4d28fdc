"""Scores and metrics of trustsim's Inspect tasks, computed by ``analysis`` from the samples' run directories.

- Per sample (:func:`trustsim_scorer`): the family's measures of the sample's one run, for the agent under
  test: escape room ``volume`` (verifications per D-correct game), ``partner_share``, ``escape_rate``,
  ``survival``, ``regret`` (the yardstick's, expected coins per decision); reliance ``accuracy`` and
  ``regret``; arena ``cooperation``; trust game ``sent_share`` and ``returned_share``; ``brier`` wherever the
  agent stated probabilities. Each is what the family's analysis reports for that run.
- Task metrics, pooled over every sample (and epoch) with the analyses' cluster-bootstrap intervals
  (:mod:`analysis.plan.measures`, the intervals of ``analysis trust`` and the other families):
  :func:`headline` gives each cell's headline measures, :func:`deltas` the formation (``delta_trust`` =
  volume − the memoryless anchor's) and targeting (``delta_target`` = partner share − the anchor's) deltas of
  every escape-room cell with memory, when the task also played the memoryless anchor (both conditions).

A metric entry is ``<measure>`` (``<measure> (<cell>)`` when the task holds several cells), with ``low`` and
``high`` entries of its 95% interval when the analysis gives one.
"""

from __future__ import annotations

import json
import math
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from analysis.inspect_logs import RUN_FILES_KEY
from analysis.plan.measures import load_cells
from analysis.rundirs import EVENTS, MANIFEST, DataWarning, RunDirError

HEADLINE = {
    "escape_room": ("volume", "partner_share"),
    "reliance": ("accuracy", "regret"),
    "arena": ("cooperation",),
    "trust_game": ("sent_share", "returned_share"),
}
"""Each family's headline measures (names of :data:`analysis.plan.measures.MEASURES`); ``brier`` joins
every family."""
DELTAS = ("delta_trust", "delta_target")
SAMPLE_KEYS = {
    "escape_room": ("volume", "partner_share", "escape_rate", "survival", "regret", "brier"),
    "reliance": ("accuracy", "regret", "brier"),
    "arena": ("cooperation", "brier"),
    "trust_game": ("sent_share", "returned_share", "brier"),
}
"""A sample's score keys, the same for every sample of a family (NaN where a measure does not exist for the
run, e.g. the partner share of a session without a verification), so epochs reduce key by key."""
TRUST_MEASURES = ("volume", "partner_share", "escape_rate", "survival")
N_RESAMPLES = 5000  # as the analyses default (analysis trust: --resamples 5000)
SAMPLE_RESAMPLES = 200  # a sample's own values are point estimates; its intervals are not reported


def materialise(root: Path, name: str, files: Mapping[str, str]) -> Path:
    """Write one run's files into ``root/name`` (a run directory the analyses read)."""
    run_dir = root / name
    run_dir.mkdir(parents=True, exist_ok=True)
    for file, text in files.items():
        (run_dir / file).write_text(text, encoding="utf-8")
    return run_dir


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def _quiet_cells(measure: str, paths: Sequence[Path], **options: Any) -> list[Any]:
    """The cells of ``measure`` in ``paths`` (none when no run of its family is there)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        try:
            cells, _ = load_cells(measure, [str(p) for p in paths], **options)
        except RunDirError:
            return []
    return cells


def subject_of(manifest: Mapping[str, Any]) -> set[str]:
    """Names the agent under test goes by in the analyses' cell keys (agent, model, ``scripted:<agent>``)."""
    cfg = manifest.get("config") or {}
    agent = str((cfg.get("agent") or {}).get("name") or "")
    model = str((cfg.get("model") or {}).get("name") or "")
    names = {agent, agent.removeprefix("ipd_"), f"scripted:{agent}"}
    if agent == "llm":
        names.add(model)
    return {n for n in names if n}


def pick(cells: Sequence[Any], subject: set[str]) -> Any | None:
    """The cell of the agent under test: the only cell, else the one whose keys name it most (a tie: none)."""
    cells = [c for c in cells if getattr(c, "role", "cell") == "cell"]
    if len(cells) == 1:
        return cells[0]
    scored = sorted(
        ((sum(str(v) in subject for v in c.keys.values()), i) for i, c in enumerate(cells)), reverse=True
    )
    if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return cells[scored[0][1]]
    return None


def escape_values(run_dir: Path) -> dict[str, float]:
    """Volume, partner share, escape rate and survival of the run's one cell (``analysis trust``), and the
    yardstick's mean regret."""
    from analysis import yardstick
    from analysis.escape_room.loader import load_trust_data
    from analysis.escape_room.measures import compute_cells

    out: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        cells = compute_cells(load_trust_data([str(run_dir)]), n_resamples=SAMPLE_RESAMPLES)
        if len(cells) == 1:
            out = {m: cells[0].measures[m].estimate for m in TRUST_MEASURES}
        summary = yardstick.analyse([str(run_dir)]).tables.get("summary")
    if summary is not None and len(summary) == 1 and "regret_mean" in summary:
        out["regret"] = float(summary["regret_mean"].iloc[0])
    return out


def sample_values(run_dir: Path, family: str) -> dict[str, float]:
    """The per-sample measures of one run directory (the agent under test's): every key of the family's
    :data:`SAMPLE_KEYS`, NaN where the run has no value."""
    manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    subject = subject_of(manifest)
    values = escape_values(run_dir) if family == "escape_room" else {}
    for measure in HEADLINE.get(family, ()) if family != "escape_room" else ():
        cell = pick(_quiet_cells(measure, [run_dir], n_resamples=SAMPLE_RESAMPLES), subject)
        if cell is not None:
            values[measure] = cell.current.estimate
    brier = [
        c
        for c in _quiet_cells("brier", [run_dir], n_resamples=SAMPLE_RESAMPLES)
        if c.keys.get("source") == "native"
    ]
    cell = pick(brier, subject)
    if cell is not None:
        values["brier"] = cell.current.estimate
    return {k: float(values[k]) if _finite(values.get(k)) else math.nan for k in SAMPLE_KEYS.get(family, ())}


@scorer(metrics=[])  # metrics are attached by the task: headline() and, for the escape room, deltas()
def trustsim_scorer() -> Scorer:
    """Score a sample from its run directory (the solver keeps it in the sample's store)."""

    async def score(state: TaskState, target: Target) -> Score:
        files = state.store.get(RUN_FILES_KEY) or {}
        manifest = json.loads(files.get(MANIFEST) or "{}")
        family = str(manifest.get("game") or "")
        if manifest.get("status") != "complete":
            reason = (manifest.get("failure") or {}).get("reason") or "the job did not run"
            return Score(value=math.nan, reason="trustsim_job_failed", explanation=reason)
        with tempfile.TemporaryDirectory(prefix="trustsim-score-") as tmp:
            values = sample_values(materialise(Path(tmp), "run", files), family)
        kept = {k: v for k, v in files.items() if k != EVENTS}  # what the metrics read: manifest and tables
        counts = ", ".join(f"{v} {k}" for k, v in (manifest.get("counts") or {}).items())
        return Score(
            value=values,
            answer=f"{family}: {counts}" if counts else family,
            explanation="; ".join(f"{k} {v:.4g}" for k, v in values.items() if _finite(v))
            or "no measure applies",
            metadata={RUN_FILES_KEY: kept, "family": family, "run_id": manifest.get("run_id")},
        )

    return score


def run_dirs(root: Path, scores: Iterable[SampleScore]) -> list[Path]:
    """Every scored sample's run directory written under ``root`` (one per sample and epoch)."""
    out = []
    for i, s in enumerate(scores):
        files = (s.score.metadata or {}).get(RUN_FILES_KEY)
        if isinstance(files, dict) and MANIFEST in files:
            out.append(materialise(root, f"{i:06d}", files))
    return out


def families(scores: Iterable[SampleScore]) -> list[str]:
    return sorted({str((s.score.metadata or {}).get("family")) for s in scores} - {"None", ""})


def interval_entries(name: str, interval: Any) -> dict[str, float]:
    """``name`` → estimate, and ``name low`` / ``name high`` when the interval exists."""
    out = {}
    if _finite(interval.estimate):
        out[name] = float(interval.estimate)
        if _finite(interval.low) and _finite(interval.high):
            out[f"{name} low"], out[f"{name} high"] = float(interval.low), float(interval.high)
    return out


def cell_entries(measure: str, cells: Sequence[Any]) -> dict[str, float]:
    """Metric entries of one measure's cells (the cell's label in brackets when there are several)."""
    mine = [c for c in cells if getattr(c, "role", "cell") == "cell"]
    out: dict[str, float] = {}
    for cell in mine:
        name = measure if len(mine) == 1 else f"{measure} ({cell.label})"  # no [ ]: Rich markup
        out.update(interval_entries(name, cell.current))
    return out


@metric(scores="unreduced")
def headline() -> Metric:
    """Each cell's headline measures with the analyses' cluster-bootstrap intervals (every sample and epoch)."""

    def compute(scores: list[SampleScore]) -> Value:
        with tempfile.TemporaryDirectory(prefix="trustsim-metric-") as tmp:
            paths = run_dirs(Path(tmp), scores)
            out: dict[str, float] = {}
            for family in families(scores):
                for measure in HEADLINE.get(family, ()):
                    out.update(cell_entries(measure, _quiet_cells(measure, paths, n_resamples=N_RESAMPLES)))
            brier = [
                c
                for c in _quiet_cells("brier", paths, n_resamples=N_RESAMPLES)
                if c.keys.get("source") == "native"
            ]
            out.update(cell_entries("brier", brier))
        return out

    return compute


@metric(scores="unreduced")
def deltas() -> Metric:
    """Formation (``delta_trust``) and targeting (``delta_target``) deltas of the escape-room cells with memory
    against the memoryless anchor the task also played, with the trust analysis's intervals."""

    def compute(scores: list[SampleScore]) -> Value:
        with tempfile.TemporaryDirectory(prefix="trustsim-metric-") as tmp:
            paths = run_dirs(Path(tmp), scores)
            out: dict[str, float] = {}
            for measure in DELTAS:
                cells = _quiet_cells(measure, paths, n_resamples=N_RESAMPLES, anchor="data")
                out.update(cell_entries(measure, [c for c in cells if c.anchor is not None]))
        return out

    return compute
