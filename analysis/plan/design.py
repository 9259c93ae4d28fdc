"""What an interval's width depends on, and how many sessions a target half-width needs.

Every headline measure is a ratio of sums, ``R = Σ num / Σ den``, over a cell's units (games, pairs, matches,
predictions, blueprint-sessions). A run's ``runs=`` sets its number of *sessions*; how sessions turn into
the analysis's resampling clusters is the cell's *design*:

- ``session``: the cluster is the session (escape room with memory, calibration per session). Units within
  a session share it, so Var(R̂) = (σ²_b + σ²_w / g) / n for n sessions of g units: σ²_b is the
  between-session variance, σ²_w the within-session (unit-to-unit) variance (one-way ANOVA on the units'
  linearised residuals ``(num − R·den) / mean den``, in units of the measure). The sum is estimated
  directly from the sessions' summed residuals (k − 1 degrees of freedom for k sessions).
- ``unit``: the cluster is a unit inside a session (memoryless escape-room games, trust-game pairs, arena
  matches): the analysis treats units as independent, so Var(R̂) = σ²_t / (n·g), σ²_t the units' variance.
- ``item``: the cluster is a fixed item replayed in every session (reliance blueprints): more sessions
  shrink only the within-item part, Var(R̂) = (τ² + σ²_w / n) / B over B items, and τ² / B is a floor.

All three are ``Var(R̂) ≈ floor + per_session / n``. A pilot's variance is an estimate, so a plan that
takes it at face value reaches its target only about half the time; :func:`sessions_for_width` chooses the
smallest n whose achieved half-width is at most W with probability ``assurance`` under normal theory: the
achieved variance over the pilot's is F-distributed, so the pilot variance is scaled by the F quantile with
the final study's and the pilot's degrees of freedom (Kupper & Hafner 1989; it accounts for the noise of
both). :func:`sessions_for_power` scales it by the upper ``assurance`` confidence bound of a chi-square
(Browne 1995) instead, as the power calculation already carries the final study's noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy.stats import chi2, f, norm

from analysis.stats import MIN_CLUSTERS

Design = Literal["session", "unit", "item"]
MAX_SESSIONS = 1_000_000
"""Plans above this are reported as out of reach rather than as a number."""


@dataclass(frozen=True)
class Units:
    """One cell's observations of one ratio measure: one entry per unit.

    Attributes:
        session: session code of each unit (what ``runs=`` counts).
        num, den: the unit's numerator and denominator sums.
        design: how sessions become resampling clusters (see the module docstring).
        item: the item of each unit (``item`` design only; a unit is then one item in one session).
    """

    session: np.ndarray
    num: np.ndarray
    den: np.ndarray
    design: Design
    item: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        session: object,
        num: object,
        den: object,
        design: Design,
        item: object | None = None,
    ) -> Units:
        """Validate and wrap per-unit arrays (any array-likes of one length)."""
        s = np.asarray(session).ravel()
        n = np.asarray(num, dtype=float).ravel()
        d = np.asarray(den, dtype=float).ravel()
        it = None if item is None else np.asarray(item).ravel()
        if not (s.size == n.size == d.size and (it is None or it.size == s.size)):
            raise ValueError("session, num, den (and item) must have the same length")
        if not (np.all(np.isfinite(n)) and np.all(np.isfinite(d))):
            raise ValueError("num and den must be finite numbers")
        if design == "item" and it is None:
            raise ValueError("the item design needs the item of every unit")
        return cls(s, n, d, design, it)


@dataclass(frozen=True)
class Variance:
    """A cell's variance components and what they give at n sessions (measure units throughout).

    Attributes:
        design: ``session``, ``unit`` or ``item``.
        estimate: the ratio R over the pilot.
        sessions: pilot sessions (k).
        units_per_session: mean units per session (g: games, pairs, matches, blueprints...).
        between: σ²_b, between-session variance of the session-level mean (``item``: τ², between items).
        within: σ²_w, within-session unit-to-unit variance (``item``: between sessions within an item).
        floor: the part of Var(R̂) that more sessions do not reduce (``item`` design: τ² / B; else 0).
        per_session: Var(R̂) × n for the part that sessions reduce.
        df: degrees of freedom of the pilot's estimate of ``per_session`` (for the assurance factor).
        floor_df: degrees of freedom of ``floor`` (``item`` design).
        clusters_per_session: resampling clusters one session adds (1, g, or 0 for fixed items).
        items: number of fixed items (``item`` design), else 0.
        note: why the variance is unknown (empty when known).
    """

    design: Design
    estimate: float
    sessions: int
    units_per_session: float
    between: float
    within: float
    floor: float
    per_session: float
    df: float
    floor_df: float = math.inf
    clusters_per_session: float = 1.0
    items: int = 0
    note: str = ""

    @property
    def known(self) -> bool:
        """True when the pilot gives a variance to plan from."""
        return not self.note and math.isfinite(self.per_session)

    @property
    def icc(self) -> float:
        """Share of the unit variance that lies between sessions (items), σ²_b / (σ²_b + σ²_w)."""
        total = self.between + self.within
        return self.between / total if total > 0 else math.nan

    def variance(self, sessions: float) -> float:
        """Var(R̂) with ``sessions`` sessions."""
        return self.floor + self.per_session / sessions

    def half_width(self, sessions: float, level: float) -> float:
        """Projected half-width of the ``level`` interval with ``sessions`` sessions (normal theory)."""
        return z_value(level) * math.sqrt(self.variance(sessions))

    def final_df(self, sessions: int) -> float:
        """Degrees of freedom of the final study's variance estimate with ``sessions`` sessions."""
        if self.design == "item":
            return max(1.0, self.items - 1.0)
        return max(1.0, sessions * self.clusters_per_session - 1.0)

    def min_sessions(self) -> int:
        """Fewest sessions that give an interval at all (>= 3 clusters)."""
        if self.design == "session":
            return MIN_CLUSTERS
        if self.design == "unit":
            return max(1, math.ceil(MIN_CLUSTERS / max(self.clusters_per_session, 1e-9)))
        return 1


def z_value(level: float) -> float:
    """Two-sided normal quantile of an interval at ``level``."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return float(norm.ppf((1 + level) / 2))


def _anova(groups: np.ndarray, values: np.ndarray) -> tuple[float, float, int, float]:
    """One-way random-effects ANOVA: (σ²_between, σ²_within, groups, mean group size); NaN where undefined.

    Unbalanced groups use the usual g₀ = (N − Σgᵢ² / N) / (k − 1). σ²_between is not truncated at 0: a
    negative value says units within a group are negatively correlated (an escape-room session that verifies
    much in one game verifies little in the next).
    """
    _, codes = np.unique(groups, return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    sizes = np.bincount(codes, minlength=k).astype(float)
    n_total = float(values.size)
    if k == 0:
        return math.nan, math.nan, 0, math.nan
    means = np.bincount(codes, weights=values, minlength=k) / sizes
    grand = float(values.mean())
    ssw = float(((values - means[codes]) ** 2).sum())
    within = ssw / (n_total - k) if n_total > k else math.nan
    if k < 2:
        return math.nan, within, k, n_total / k
    msb = float((sizes * (means - grand) ** 2).sum()) / (k - 1)
    g0 = (n_total - float((sizes**2).sum()) / n_total) / (k - 1)
    if math.isnan(within):  # one unit per group: all variance is between groups
        return msb, 0.0, k, n_total / k
    between = (msb - within) / g0 if g0 > 0 else 0.0
    return between, within, k, n_total / k


def _residuals(units: Units) -> tuple[float, float, np.ndarray]:
    """(R, mean den per unit, residuals in measure units)."""
    total = float(units.den.sum())
    ratio = float(units.num.sum()) / total if total != 0 else math.nan
    den_mean = total / units.den.size if units.den.size else math.nan
    if math.isnan(ratio) or den_mean == 0:
        return ratio, den_mean, np.zeros(0)
    return ratio, den_mean, (units.num - ratio * units.den) / den_mean


def _unknown(units: Units, estimate: float, sessions: int, note: str) -> Variance:
    return Variance(
        units.design, estimate, sessions, math.nan, math.nan, math.nan, 0.0, math.nan, 0.0, note=note
    )


def fit(units: Units) -> Variance:
    """Variance components of one cell from its units (a pilot or any data)."""
    ratio, _, resid = _residuals(units)
    sessions = int(np.unique(units.session).size)
    if units.session.size == 0:
        return _unknown(units, math.nan, 0, "no data for this measure")
    if math.isnan(ratio) or resid.size == 0:
        return _unknown(units, ratio, sessions, "the denominator is 0 (nothing to divide by)")
    if units.design == "item":
        return _fit_items(units, ratio, resid, sessions)
    between, within, k, g = _anova(units.session, resid)
    if units.design == "session":
        if k < 2:
            return _unknown(units, ratio, k, f"{k} session: the between-session variance needs >= 2")
        # Var(R̂)·n is the variance of a session's summed residuals over g²: estimated directly (it equals
        # σ²_b + σ²_w / g for balanced sessions, and stays right when games within a session are negatively
        # correlated, which makes the ANOVA's σ²_b negative)
        _, codes = np.unique(units.session, return_inverse=True)
        totals = np.bincount(codes, weights=resid)
        per_session = float((totals**2).sum()) / (k - 1) / g**2
        return Variance("session", ratio, k, g, between, within, 0.0, per_session, k - 1.0)
    total = float(resid.var(ddof=1)) if resid.size > 1 else math.nan
    if math.isnan(total):
        return _unknown(units, ratio, k, f"{resid.size} unit: the variance needs >= 2")
    return Variance("unit", ratio, k, g, between if k > 1 else math.nan, within, 0.0, total / g,
                    resid.size - 1.0, clusters_per_session=g)  # fmt: skip


def _fit_items(units: Units, ratio: float, resid: np.ndarray, sessions: int) -> Variance:
    """Items crossed with sessions: τ² between items, σ²_w between sessions within an item."""
    assert units.item is not None
    tau2, within, items, _ = _anova(units.item, resid)
    if items < MIN_CLUSTERS:
        return _unknown(units, ratio, sessions, f"{items} item(s) (< {MIN_CLUSTERS}): no interval")
    if sessions < 2:
        return _unknown(units, ratio, sessions, "1 session: the within-item variance needs >= 2 sessions")
    # an item's mean over n sessions varies by τ² + σ²_w / n; the bootstrap averages B items
    floor = max(0.0, tau2) / items
    per_session = within / items
    return Variance("item", ratio, sessions, units.session.size / sessions, tau2, within, floor, per_session,
                    items * (sessions - 1.0), floor_df=items - 1.0, clusters_per_session=0.0,
                    items=items)  # fmt: skip


def combine(parts: list[Variance], signs: list[float] | None = None) -> Variance:
    """The variance of a sum/difference of independently resampled cells, each run with n sessions.

    Degrees of freedom follow Satterthwaite; a part with an unknown variance makes the result unknown.
    """
    for p in parts:
        if not p.known:
            return replace(p, note=p.note or "unknown variance")
    per = sum(p.per_session for p in parts)
    floor = sum(p.floor for p in parts)
    df = _satterthwaite([(p.per_session, p.df) for p in parts])
    floor_df = _satterthwaite([(p.floor, p.floor_df) for p in parts]) if floor > 0 else math.inf
    est = sum(s * p.estimate for s, p in zip(signs or [1.0] * len(parts), parts, strict=True))
    first = parts[0]
    return Variance(first.design, est, min(p.sessions for p in parts), first.units_per_session,
                    math.nan, math.nan, floor, per, df, floor_df,
                    min(p.clusters_per_session for p in parts), max(p.items for p in parts))  # fmt: skip


def _satterthwaite(terms: list[tuple[float, float]]) -> float:
    total = sum(v for v, _ in terms)
    den = sum(v * v / d for v, d in terms if v > 0 and math.isfinite(d))
    if total <= 0:
        return math.inf
    return total * total / den if den > 0 else math.inf


@dataclass(frozen=True)
class Plan:
    """Sessions for a target, or why there is no number."""

    sessions: int | None
    expected: int | None  # at the pilot's variance taken as true (no assurance)
    note: str = ""


def _solve(var: Variance, target_var: float, factor: Callable[[int], float], minimum: int) -> int | None:
    """Smallest n >= minimum with factor(n) · Var(n) <= target_var (both fall with n, so the condition is
    monotone: bisection between ``minimum`` and the n that the factor at ``minimum`` needs); None when out of
    reach."""

    def fits(n: int) -> bool:
        return factor(n) * var.variance(n) <= target_var

    if fits(minimum):
        return minimum
    c = factor(minimum)
    room = target_var / c - var.floor
    if room <= 0:  # maybe reachable with a smaller factor at larger n
        c = factor(MAX_SESSIONS)
        room = target_var / c - var.floor
        if room <= 0:
            return None
    high = max(minimum, math.ceil(var.per_session / room))
    if high > MAX_SESSIONS or not fits(high):
        high = MAX_SESSIONS
        if not fits(high):
            return None
    low = minimum  # fits(low) is False, fits(high) is True
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid
    return high


def sessions_for_width(var: Variance, width: float, level: float = 0.95, assurance: float = 0.9) -> Plan:
    """Sessions whose ``level`` interval has half-width <= ``width`` with probability ``assurance``.

    Under normal theory the achieved variance over the pilot's is F(final df, pilot df); the plan takes the
    smallest n with z² · F_assurance · Var(n) <= width². ``expected`` is the plan at the pilot's variance
    (the half-width is ``width`` on average, reached about half the time).
    """
    if width <= 0:
        raise ValueError(f"width must be > 0, got {width}")
    if not var.known:
        return Plan(None, None, var.note)
    target = (width / z_value(level)) ** 2
    minimum = var.min_sessions()
    if var.per_session == 0 and var.floor == 0:
        return Plan(minimum, minimum, "no variance in the data: the fewest sessions that give an interval "
                    "(the true variance may still be above 0)")  # fmt: skip

    def factor(n: int) -> float:
        return float(f.ppf(assurance, var.final_df(n), var.df)) if math.isfinite(var.df) else 1.0

    assured = _solve(var, target, factor, minimum)
    expected = _solve(var, target, lambda _: 1.0, minimum)
    if expected is None:
        return Plan(None, None, _unreachable(var, width, level))
    if assured is None:
        return Plan(None, expected, _unreachable(var, width, level, assured=True))
    return Plan(assured, expected)


def sessions_for_power(
    var: Variance, effect: float, level: float = 0.95, power: float = 0.8, assurance: float = 0.9
) -> Plan:
    """Sessions to detect a difference ``effect`` (two-sided test at 1 − level) with probability ``power``.

    n solves (z_(1−α/2) + z_power)² · Var(n) <= effect², with the pilot's variance raised to its upper
    ``assurance`` confidence bound (df / χ²_(1−assurance)(df)).
    """
    if effect == 0:
        raise ValueError("effect must not be 0")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if not var.known:
        return Plan(None, None, var.note)
    target = (abs(effect) / (z_value(level) + float(norm.ppf(power)))) ** 2
    minimum = var.min_sessions()
    ucl = var.df / float(chi2.ppf(1 - assurance, var.df)) if math.isfinite(var.df) else 1.0
    assured = _solve(var, target, lambda _: ucl, minimum)
    expected = _solve(var, target, lambda _: 1.0, minimum)
    if expected is None:
        return Plan(None, None, "the floor of this design exceeds the effect: more items needed")
    if assured is None:
        return Plan(None, expected, "out of reach at the variance's upper bound: a larger pilot narrows it")
    return Plan(assured, expected)


def _unreachable(var: Variance, width: float, level: float, *, assured: bool = False) -> str:
    if var.floor > 0:
        best = z_value(level) * math.sqrt(var.floor)
        return (
            f"half-width {width:g} is below what more sessions can reach ({best:.3g} with these "
            f"{var.items} items): the items (e.g. blueprints) limit it"
        )
    return f"more than {MAX_SESSIONS:,} sessions" + (" at the assured variance" if assured else "")
