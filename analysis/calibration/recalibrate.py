"""Recalibration maps (Platt scaling, isotonic regression) and honest cross-fitted scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import isotonic_regression

from analysis.calibration._validate import check_pairs

Method = Literal["platt", "isotonic"]
LOGIT_EPS = 1e-6
"""Platt's feature is logit(p) with p clipped to [eps, 1 - eps]."""


class Recalibrator(Protocol):
    """A fitted map from stated probability to recalibrated probability."""

    def predict(self, p: ArrayLike) -> NDArray[np.float64]: ...


def _logit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(p, LOGIT_EPS, 1.0 - LOGIT_EPS)
    return np.log(q) - np.log1p(-q)


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True)
class Platt:
    """Platt scaling: ``sigmoid(a * logit(p) + b)`` fitted by unpenalised maximum likelihood."""

    a: float
    b: float

    @classmethod
    def fit(cls, p: ArrayLike, y: ArrayLike, max_iter: int = 100, tol: float = 1e-10) -> Platt:
        """Newton–Raphson on the (concave) log-likelihood, over distinct p values with weights.

        With perfectly separable data the likelihood has no maximum; the iteration stops after
        ``max_iter`` steps with a steep but finite map.
        """
        p_arr, y_arr = check_pairs(p, y)
        vals, inv = np.unique(p_arr, return_inverse=True)
        w = np.bincount(inv).astype(np.float64)
        s = np.bincount(inv, weights=y_arr)
        x = np.column_stack([_logit(vals), np.ones_like(vals)])
        theta = np.zeros(2)
        base = float(y_arr.mean())
        if 0.0 < base < 1.0:
            theta[1] = np.log(base / (1.0 - base))
        for _ in range(max_iter):
            mu = _sigmoid(x @ theta)
            grad = x.T @ (s - w * mu)
            hess = (x * (w * mu * (1.0 - mu))[:, None]).T @ x + 1e-12 * np.eye(2)
            step = np.linalg.solve(hess, grad)
            theta = theta + step
            if np.max(np.abs(step)) < tol:
                break
        return cls(float(theta[0]), float(theta[1]))

    def predict(self, p: ArrayLike) -> NDArray[np.float64]:
        """Recalibrated probabilities."""
        return _sigmoid(self.a * _logit(np.asarray(p, dtype=np.float64)) + self.b)


def pava(y: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weighted isotonic fit: the non-decreasing f minimising sum w (y - f)^2 (scipy's PAVA)."""
    return np.asarray(isotonic_regression(y, weights=w, increasing=True).x, dtype=np.float64)


@dataclass(frozen=True)
class Isotonic:
    """Isotonic (non-decreasing) regression of y on p; predictions interpolate linearly between the
    fitted distinct p values and are clipped to the end values outside them (as scikit-learn does)."""

    x: NDArray[np.float64]
    f: NDArray[np.float64]

    @classmethod
    def fit(cls, p: ArrayLike, y: ArrayLike) -> Isotonic:
        """Fit on distinct p values (ties averaged, weighted by count)."""
        p_arr, y_arr = check_pairs(p, y)
        vals, inv = np.unique(p_arr, return_inverse=True)
        w = np.bincount(inv).astype(np.float64)
        mean_y = np.bincount(inv, weights=y_arr) / w
        return cls(vals, pava(mean_y, w))

    def predict(self, p: ArrayLike) -> NDArray[np.float64]:
        """Recalibrated probabilities."""
        return np.interp(np.asarray(p, dtype=np.float64), self.x, self.f)


def fit(method: Method, p: ArrayLike, y: ArrayLike) -> Recalibrator:
    """Fit the named recalibration map."""
    if method == "platt":
        return Platt.fit(p, y)
    if method == "isotonic":
        return Isotonic.fit(p, y)
    raise ValueError(f"unknown recalibration method {method!r} (use 'platt' or 'isotonic')")


def fold_plan(n_clusters: int, n_rows: int, n_folds: int) -> tuple[str, int]:
    """(unit, folds) that :func:`fold_ids` uses: ``("cluster", min(n_folds, n_clusters))``, or
    ``("row", min(n_folds, n_rows))`` when there are fewer than 2 clusters (nothing to keep together)."""
    if n_clusters < 2:
        return "row", min(n_folds, n_rows)
    return "cluster", min(n_folds, n_clusters)


def fold_ids(clusters: ArrayLike, n_folds: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Assign whole clusters to folds at random (near-equal numbers of clusters per fold).

    With fewer than 2 clusters the rows themselves are split into folds (there is no grouping to keep):
    see :func:`fold_plan`.
    """
    c = np.asarray(clusters).ravel()
    _, inv = np.unique(c, return_inverse=True)
    n_groups = int(inv.max()) + 1 if c.size else 0
    unit, k = fold_plan(n_groups, c.size, n_folds)
    if unit == "row":
        inv, n_groups = np.arange(c.size), c.size
    if k < 2:
        raise ValueError(f"cross-fitting needs at least 2 clusters or rows, got {n_groups}")
    group_fold = rng.permutation(n_groups) % k
    return group_fold[inv]


@dataclass(frozen=True)
class CrossFit:
    """Out-of-fold recalibrated predictions and the Brier score before/after."""

    method: str
    p_oof: NDArray[np.float64]
    brier_before: float
    brier_after: float
    n_folds: int


def cross_fit(
    p: ArrayLike,
    y: ArrayLike,
    clusters: ArrayLike,
    method: Method = "isotonic",
    n_folds: int = 5,
    seed: int | np.random.Generator = 0,
) -> CrossFit:
    """Cross-fitted recalibration: each fold is recalibrated by a map fitted on the other folds only.

    Folds are formed from whole clusters (runs or matches), so no cluster informs its own recalibration.
    """
    p_arr, y_arr = check_pairs(p, y)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    folds = fold_ids(clusters, n_folds, rng)
    if folds.size != p_arr.size:
        raise ValueError(f"clusters has {folds.size} entries but there are {p_arr.size} pairs")
    out = np.empty_like(p_arr)
    k = int(folds.max()) + 1
    for f in range(k):
        test = folds == f
        out[test] = fit(method, p_arr[~test], y_arr[~test]).predict(p_arr[test])
    return CrossFit(method, out, float(np.mean((p_arr - y_arr) ** 2)), float(np.mean((out - y_arr) ** 2)), k)
