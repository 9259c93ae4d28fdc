"""A cell to plan: its units, today's interval, and the Hydra overrides that run it again."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analysis.plan.design import Units
from analysis.stats import Interval

DROPPED_KEYS = ("runs", "seed", "preview", "progress", "plan")
"""Override keys a plan does not copy from a pilot: the plan sets ``runs``; the sweep command chooses the
seed (the pilot's own seed makes its sessions the study's first ones, answered from the request store)."""


@dataclass
class PlanCell:
    """One cell of a measure, as the planner sees it.

    Attributes:
        keys: the cell's keys (model, schedule, memory, ... for the escape room).
        units: its observations (see :class:`analysis.plan.design.Units`).
        current: the interval the analysis reports today (estimate, bounds, clusters, note).
        overrides: Hydra overrides that run this cell again (without ``runs=``).
        overrides_note: where the overrides come from when not from the runs' own ``.hydra/overrides.yaml``.
        model: the model's config name (``conf/model/<model>.yaml``) for pricing; empty for scripted agents.
        role: ``cell``, or ``anchor`` for the anchor a delta is taken against.
        anchor: delta measures: the anchor cell (None when there is none, or it is a published point value).
        anchor_note: what the anchor is (``published point value ...``), when not a cell of the data.
    """

    keys: dict[str, str]
    units: Units
    current: Interval
    overrides: tuple[str, ...]
    overrides_note: str = ""
    model: str = ""
    role: str = "cell"
    anchor: PlanCell | None = None
    anchor_note: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The non-empty keys joined with `` / ``."""
        return " / ".join(str(v) for v in self.keys.values() if str(v) not in ("", "nan"))


def no_interval(note: str) -> Interval:
    """An interval that does not exist, with the reason."""
    return Interval(math.nan, math.nan, math.nan, 0, note)


def override_key(text: str) -> str:
    """The key of an override (``+experiment=1strike`` -> ``experiment``; ``~a.b`` -> ``a.b``)."""
    return text.split("=", 1)[0].lstrip("+~")


def read_overrides(run_dir: str | Path) -> list[str] | None:
    """The job's own overrides (``.hydra/overrides.yaml``, written by Hydra for every CLI job); None when
    the run was not made by the command line (e.g. ``trustsim.api.run``) or the file is unreadable."""
    path = Path(run_dir) / ".hydra" / "overrides.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        return None
    return data


def plan_overrides(overrides: Iterable[str]) -> tuple[str, ...]:
    """A pilot's overrides without the keys a plan sets or leaves to the sweep (:data:`DROPPED_KEYS`,
    ``hydra.*``)."""
    out = []
    for text in overrides:
        key = override_key(text)
        if key in DROPPED_KEYS or key.startswith("hydra.") or key.startswith("hydra/"):
            continue
        out.append(text)
    return tuple(out)


def common_overrides(
    paths: Iterable[str | Path], fallback: tuple[str, ...], fallback_note: str
) -> tuple[tuple[str, ...], str]:
    """The overrides of a cell's runs (the most common set; a note when they differ or are missing)."""
    found = [(str(p), read_overrides(p)) for p in sorted(str(p) for p in paths)]
    sets = [plan_overrides(o) for _, o in found if o is not None]
    if not sets:
        return fallback, fallback_note
    counts = Counter(sets)
    best, _ = counts.most_common(1)[0]
    notes = []
    if len(counts) > 1:
        notes.append(f"the cell's runs had {len(counts)} different override sets; the most common is used")
    if len(sets) < len(found):
        notes.append(f"{len(found) - len(sets)} run(s) without .hydra/overrides.yaml")
    return best, "; ".join(notes)


def with_model(overrides: tuple[str, ...], model: str) -> tuple[str, ...]:
    """Overrides that run the same cell with the LLM agent on ``model`` (``agent=llm model=<model>``)."""
    kept = tuple(o for o in overrides if override_key(o) not in ("agent", "model"))
    return (*kept, "agent=llm", f"model={model}")
