"""Read a plan file (``plan.csv`` of ``python -m analysis plan``) into the jobs it asks for.

A plan file needs two columns: ``overrides`` (the job's Hydra overrides, shell-quoted as ``shlex.join`` writes
them) and ``runs`` (its sessions; empty when the plan has no number for that cell). ``label`` (optional) names
the cell in messages. Rows with the same overrides are one job with the largest ``runs``.
"""

from __future__ import annotations

import csv
import shlex
from dataclasses import dataclass
from pathlib import Path

from trustsim.config import MAX_RUNS

REQUIRED = ("overrides", "runs")


class PlanFileError(ValueError):
    """The plan file cannot be read or holds a bad value (the message names the file, row and column)."""


@dataclass(frozen=True)
class PlanJob:
    """One job of a plan: its overrides, its sessions and the cells it serves."""

    overrides: tuple[str, ...]
    runs: int
    labels: tuple[str, ...]


@dataclass(frozen=True)
class PlanJobs:
    """The jobs of a plan file, and its rows without a number (label, reason)."""

    jobs: tuple[PlanJob, ...]
    skipped: tuple[tuple[str, str], ...]
    merged: int


def read_plan(path: str | Path) -> PlanJobs:
    """The jobs of the plan file at ``path``.

    Raises:
        PlanFileError: the file is missing or unreadable, lacks a column, or a row's ``runs`` is not a
            positive integer or its ``overrides`` cannot be parsed.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
            columns = rows[0].keys() if rows else []
    except OSError as exc:
        raise PlanFileError(f"+plan={path}: cannot read the plan file ({exc.strerror or exc})") from exc
    except csv.Error as exc:
        raise PlanFileError(f"+plan={path}: not a CSV file ({exc})") from exc
    except UnicodeDecodeError:
        raise PlanFileError(f"+plan={path}: not a CSV file (not UTF-8 text)") from None
    if not rows:
        raise PlanFileError(f"+plan={path}: the plan file has no rows")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise PlanFileError(
            f"+plan={path}: column(s) {', '.join(missing)} missing (a plan file is the plan.csv that "
            "`python -m analysis plan` writes)"
        )
    jobs: dict[tuple[str, ...], tuple[int, list[str]]] = {}
    skipped: list[tuple[str, str]] = []
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        label = (row.get("label") or "").strip() or f"row {number}"
        text = (row.get("runs") or "").strip()
        if not text:
            reason = "; ".join(x for x in (row.get("plan_note"), row.get("cell_note")) if x) or "no runs"
            skipped.append((label, reason))
            continue
        runs = _positive_int(text, path, number)
        try:
            overrides = tuple(shlex.split(row.get("overrides") or ""))
        except ValueError as exc:
            raise PlanFileError(f"+plan={path}: line {number}, column overrides: {exc}") from exc
        if not overrides:
            raise PlanFileError(f"+plan={path}: line {number} ({label}): no overrides")
        before, labels = jobs.get(overrides, (0, []))
        jobs[overrides] = (max(before, runs), [*labels, label])
    merged = sum(len(labels) - 1 for _, labels in jobs.values())
    return PlanJobs(
        tuple(PlanJob(o, runs, tuple(labels)) for o, (runs, labels) in jobs.items()), tuple(skipped), merged
    )


def _positive_int(text: str, path: Path, line: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value.is_integer() or value < 1:
        raise PlanFileError(f"+plan={path}: line {line}, column runs: {text!r} is not a positive integer")
    if value > MAX_RUNS:
        raise PlanFileError(
            f"+plan={path}: line {line}, column runs: {text} is more than {MAX_RUNS:,} (the most runs a job "
            "may have); split the cell into several jobs"
        )
    return int(value)
