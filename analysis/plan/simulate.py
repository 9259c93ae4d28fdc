"""Check a planning method by simulation: pilot, plan, run the planned study, measure the achieved width.

A *population* is a list of sessions (each a cell's units of one session): sessions of a large offline run
(every session an independent draw, as a new seed gives) or the sessions of a cell of the reference logs
(its empirical distribution). A simulated study draws a pilot of ``pilot`` distinct sessions, plans with
:func:`analysis.plan.design.sessions_for_width`, draws the planned number of sessions anew and computes the
half-width the analysis would report (cluster bootstrap, percentile). ``needed`` is what a plan that knew the population's variance would ask (its expected half-width
is W), so ``planned / needed`` says how far above the need a plan went.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.plan import clusters
from analysis.plan.design import Units, fit, sessions_for_width, z_value


@dataclass(frozen=True)
class Study:
    """One simulated study: its target, what a plan knowing the variance needs, what the plan asked for,
    and the half-width it achieved (NaN when the plan gave no number)."""

    width: float
    needed: int
    planned: int | None
    half_width: float


@dataclass(frozen=True)
class Summary:
    """How a set of simulated studies went against the target half-width ``width``."""

    studies: int
    within_110: float  # share of studies with half-width <= 1.1 W
    within_100: float
    half_width_quantiles: dict[float, float]  # of half-width / W
    planned_quantiles: dict[float, float]  # of planned / needed
    above_4x: float  # share of plans above 4 x needed
    no_plan: int

    def lines(self, name: str) -> list[str]:
        """A readable report."""
        q = self.half_width_quantiles
        p = self.planned_quantiles
        return [
            f"{name}: {self.studies} studies",
            f"  achieved half-width <= 1.1 W in {self.within_110:.1%} (<= W in {self.within_100:.1%}); "
            "half-width / W quantiles " + ", ".join(f"{k:.0%} {v:.2f}" for k, v in q.items()),
            "  planned / needed quantiles "
            + ", ".join(f"{k:.0%} {v:.2f}" for k, v in p.items())
            + f"; above 4x needed in {self.above_4x:.1%}; no plan {self.no_plan}",
        ]


def sessions_of(units: Units) -> list[Units]:
    """A cell's units split into one :class:`Units` per session."""
    _, codes = np.unique(units.session, return_inverse=True)
    out = []
    for code in range(int(codes.max()) + 1 if codes.size else 0):
        mask = codes == code
        item = None if units.item is None else units.item[mask]
        out.append(Units(units.session[mask], units.num[mask], units.den[mask], units.design, item))
    return out


def draw(population: Sequence[Units], picks: np.ndarray) -> Units:
    """The sessions ``picks`` (indices, repeats allowed) as one cell, each pick its own session."""
    parts = [population[i] for i in picks]
    session = np.concatenate([np.full(p.num.size, k) for k, p in enumerate(parts)])
    item = None if parts[0].item is None else np.concatenate([p.item for p in parts])
    return Units(
        session,
        np.concatenate([p.num for p in parts]),
        np.concatenate([p.den for p in parts]),
        parts[0].design,
        item,
    )


def _population_variance(population: Sequence[Units]) -> tuple[float, int]:
    """Var(R̂) × sessions of the population itself (plug-in: sessions drawn from it vary by this much), and
    the fewest sessions that give an interval."""
    var = fit(draw(population, np.arange(len(population))))
    k = len(population)
    per_session = var.per_session * (k - 1) / k if var.design == "session" else var.per_session
    return per_session, var.min_sessions()


def needed_sessions(population: Sequence[Units], width: float, level: float) -> int:
    """Sessions whose expected half-width is ``width`` at the population's own variance."""
    per_session, minimum = _population_variance(population)
    return max(minimum, math.ceil(per_session * (z_value(level) / width) ** 2 - 1e-9))


def width_for(population: Sequence[Units], sessions: int, level: float) -> float:
    """The half-width that ``sessions`` sessions reach on average (a target for a simulation)."""
    per_session, _ = _population_variance(population)
    return z_value(level) * math.sqrt(per_session / sessions)


def simulate(
    population: Sequence[Units],
    *,
    pilot: int,
    width: float,
    studies: int,
    seed: int,
    level: float = 0.95,
    assurance: float = 0.9,
    pool: bool = False,
    n_resamples: int = 1000,
) -> list[Study]:
    """``studies`` simulated studies drawn from ``population``.

    A pilot is ``pilot`` distinct sessions. ``pool=False`` (a cell of logs as the population): the study's
    sessions are drawn with replacement from the whole population (its empirical distribution).
    ``pool=True`` (a large pool of independent sessions, as many seeds would give): the study's sessions are
    distinct and not the pilot's (drawn with replacement only when the pool runs out).
    """
    rng = np.random.default_rng(seed)
    everyone = np.arange(len(population))
    needed = needed_sessions(population, width, level)
    out = []
    for _ in range(studies):
        pilot_picks = rng.permutation(everyone)[:pilot]
        var = fit(draw(population, pilot_picks))
        plan = sessions_for_width(var, width, level, assurance)
        if plan.sessions is None:
            out.append(Study(width, needed, None, math.nan))
            continue
        rest = np.setdiff1d(everyone, pilot_picks)
        if pool and plan.sessions <= rest.size:
            picks = rng.permutation(rest)[: plan.sessions]
        else:
            picks = rng.integers(0, len(population), plan.sessions)
        iv = clusters.interval(draw(population, picks), n_resamples=n_resamples, seed=rng, level=level)
        half = (iv.high - iv.low) / 2 if iv.has_interval else math.nan
        out.append(Study(width, needed, plan.sessions, half))
    return out


def summarise(studies: Sequence[Study]) -> Summary:
    """Shares and quantiles of a set of studies (possibly of several cells and targets); a study without a
    plan counts as a miss."""
    half = np.array([s.half_width / s.width for s in studies], dtype=float)
    planned = np.array([np.nan if s.planned is None else s.planned / s.needed for s in studies], dtype=float)
    ok = np.isfinite(half)
    probs = (0.05, 0.25, 0.5, 0.75, 0.9, 0.95)
    ratio, plan_ratio = half[ok], planned[np.isfinite(planned)]
    return Summary(
        studies=len(studies),
        within_110=float(np.sum(ratio <= 1.1) / len(studies)),
        within_100=float(np.sum(ratio <= 1.0) / len(studies)),
        half_width_quantiles={p: float(np.quantile(ratio, p)) for p in probs} if ratio.size else {},
        planned_quantiles={p: float(np.quantile(plan_ratio, p)) for p in (0.1, 0.5, 0.9)}
        if plan_ratio.size
        else {},
        above_4x=float(np.mean(plan_ratio > 4)) if plan_ratio.size else math.nan,
        no_plan=int(np.sum(~np.isfinite(planned))),
    )
