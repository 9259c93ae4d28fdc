"""``TrustsimSweeper``: Hydra's basic sweeper, plus ``+plan=PLAN.csv``.

Without ``plan`` it is Hydra's basic sweeper (same jobs, same order). With ``+plan=PLAN.csv`` every job of
the plan (a cell's overrides with its ``runs=``) is crossed with the command line's other overrides and
sweep values (``seed=0,1`` runs each planned job twice). A key set by both the plan and the command line is
an error naming it. The jobs go to whatever launcher is configured (basic, joblib, submitit, ...), in
batches of ``max_batch_size``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from omegaconf import DictConfig

from hydra_plugins.trustsim_sweeper.plan_file import PlanFileError, PlanJobs, read_plan

PLAN_KEY = "plan"
MAX_JOBS = 1_000_000
"""The most jobs one sweep may have."""


def _key(text: str) -> str:
    return text.split("=", 1)[0].lstrip("+~")


class TrustsimSweeper(BasicSweeper):
    """The basic sweeper, expanding ``+plan=PLAN.csv`` into the plan's jobs. The ``multirun.yaml`` it saves in
    the sweep directory is written from the redacted config (:func:`trustsim.hydra_record.redacted_config`)."""

    def setup(self, *, hydra_context: Any, task_function: Any, config: DictConfig) -> None:
        from trustsim.hydra_record import redacted_config

        super().setup(hydra_context=hydra_context, task_function=task_function, config=config)
        self.config = redacted_config(config)  # what sweep() saves as multirun.yaml

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Hydra composes every job of a batch here to catch errors early. A launcher that composes and
        validates every job itself before any runs (``hydra/launcher=trustsim``) is not made to wait for the
        same composition twice."""
        if getattr(self.launcher, "composes_every_job", False):
            return
        super().validate_batch_is_legal(batch)

    @staticmethod
    def split_arguments(overrides: list[Override], max_batch_size: int | None) -> list[list[list[str]]]:
        """The jobs in batches: the basic sweeper's, or the plan's crossed with the other overrides. A sweep
        without a job (a value such as ``range(-3)`` that expands to nothing) is an error."""
        plans = [o for o in overrides if o.key_or_group == PLAN_KEY and o.package is None]
        if not plans:
            batches = BasicSweeper.split_arguments(overrides, max_batch_size)
            if not any(batches):
                empty = [o.input_line or o.key_or_group for o in overrides if o.is_sweep_override()]
                raise HydraException(
                    f"the sweep has no jobs: {', '.join(str(e) for e in empty) or 'its values'} expands to no "
                    "value; nothing was run (give each swept key at least one value)"
                )
            _bounded(sum(len(b) for b in batches))
            return batches
        if len(plans) > 1 or plans[0].is_sweep_override():
            raise HydraException("+plan: give one plan file (+plan=PLAN.csv)")
        path = str(plans[0].value())
        try:
            plan = read_plan(path)
        except PlanFileError as exc:
            raise HydraException(str(exc)) from None
        rest = [o for o in overrides if o is not plans[0]]
        combos = BasicSweeper.split_arguments(rest, None)[0]
        jobs = plan_jobs(plan, combos, path)
        _bounded(len(jobs))
        _announce(plan, path, len(jobs))
        return list(BasicSweeper.split_overrides_to_chunks(jobs, max_batch_size))


def _bounded(jobs: int) -> None:
    """Refuse a sweep of more than :data:`MAX_JOBS` jobs (a typo in a range would run until killed)."""
    if jobs > MAX_JOBS:
        raise HydraException(
            f"the sweep has {jobs:,} jobs, more than {MAX_JOBS:,}; nothing was run (split it into several sweeps)"
        )


def plan_jobs(plan: PlanJobs, combos: Sequence[Sequence[str]], path: str) -> list[list[str]]:
    """Every planned job (its overrides and ``runs=``) crossed with every combination of the command line's
    overrides."""
    if not plan.jobs:
        raise HydraException(f"+plan={path}: no cell of the plan has a number of sessions (see its notes)")
    out: list[list[str]] = []
    for job in plan.jobs:
        own = [*job.overrides, f"runs={job.runs}"]
        keys = {_key(o) for o in own}
        for combo in combos:
            clash = sorted(keys & {_key(o) for o in combo})
            if clash:  # named by its label, never by its values (a row may carry a secret)
                raise HydraException(
                    f"+plan={path}: {', '.join(clash)} is set by the plan (its row {job.labels[0]}) and by the "
                    "command line; remove it from the command line or make a new plan"
                )
            out.append([*own, *combo])
    return out


def _announce(plan: PlanJobs, path: str, jobs: int) -> None:
    sessions = sum(j.runs for j in plan.jobs)
    print(
        f"trustsim: plan {path}: {len(plan.jobs)} job(s), {sessions:,} sessions"
        + (f" ({jobs} jobs with the command line's sweep values)" if jobs != len(plan.jobs) else "")
        + (f"; {plan.merged} cell(s) share a job (the largest runs is used)" if plan.merged else ""),
        file=sys.stderr,
    )
    for label, reason in plan.skipped:
        print(f"trustsim: plan: skipped {label}: {reason}", file=sys.stderr)
