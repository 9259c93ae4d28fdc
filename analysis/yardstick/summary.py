"""Per-cell summary of the yardstick (mean regret, protective share, intervals) and its Monte Carlo check."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.stats import cluster_bootstrap_mean, cluster_bootstrap_ratio
from analysis.yardstick.score import LABEL, Scored

CELL = ["source", "model", "agent", "schedule", "memory", "team"]
SUMMARY_COLUMNS = [
    "yardstick",
    "model_version",
    "variant",
    *CELL,
    "n_decisions",
    "n_verifications",
    "n_clusters",
    "regret_mean",
    "regret_low",
    "regret_high",
    "best_share",
    "protective_share",
    "protective_low",
    "protective_high",
    "note",
]
VALIDATION_COLUMNS = [
    "yardstick",
    "model_version",
    "variant",
    "run_id",
    "session",
    "game",
    "round",
    "seat",
    "action",
    "ev",
    "ev_mc",
    "mc_se",
    "z",
    "n_sims",
]


def summarise(
    decisions: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """One row per source × model × agent × schedule × memory × team (a mixed team's seats are scored under
    their own agent and model): mean regret and the share of verifications
    that were protective, each with a cluster-bootstrap interval (cluster: the game for memoryless runs, the
    session otherwise)."""
    if decisions.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    rows = []
    for key, df in decisions.groupby(CELL, sort=True, dropna=False):
        clusters = df["cluster"].astype(str).to_numpy()
        valued = df["regret"].notna().to_numpy()  # the symmetric benchmark values only its fixed points
        regret = cluster_bootstrap_mean(
            df["regret"].astype(float).to_numpy()[valued],
            clusters[valued],
            n_resamples=n_resamples,
            seed=seed,
            level=level,
        )
        verify = (df["action"] == "verify").to_numpy()
        protective = df["protective"].fillna(False).astype(bool).to_numpy() & verify
        _, inverse = np.unique(clusters, return_inverse=True)
        k = int(inverse.max()) + 1
        num = np.bincount(inverse, weights=protective.astype(float), minlength=k)
        den = np.bincount(inverse, weights=verify.astype(float), minlength=k)
        share = cluster_bootstrap_ratio(num, den, n_resamples=n_resamples, seed=seed, level=level)
        unvalued = (
            f"{int((~valued).sum())} decisions without a value (see best_action)" if not valued.all() else ""
        )
        notes = [
            n for n in (regret.note, f"protective share: {share.note}" if share.note else "", unvalued) if n
        ]
        rows.append(
            {
                "yardstick": LABEL,
                "model_version": df["model_version"].iloc[0],
                "variant": df["variant"].iloc[0],
                **dict(zip(CELL, key, strict=True)),
                "n_decisions": len(df),
                "n_verifications": int(verify.sum()),
                "n_clusters": regret.n_clusters,
                "regret_mean": regret.estimate,
                "regret_low": regret.low,
                "regret_high": regret.high,
                "best_share": float((df["regret"].astype(float)[valued] <= 1e-9).mean())
                if valued.any()
                else math.nan,
                "protective_share": share.estimate,
                "protective_low": share.low,
                "protective_high": share.high,
                "note": "; ".join(notes),
            }
        )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def validate(
    decisions: pd.DataFrame,
    checks: Sequence[Scored],
    *,
    n_decisions: int = 200,
    n_sims: int = 20_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Monte Carlo check: for up to ``n_decisions`` decisions (a seeded sample; ``checks`` are their
    :class:`Scored`, in the same order), simulate every legal action under the model and compare with the
    analytic expected value (``z`` = difference / Monte Carlo standard error)."""
    if decisions.empty or n_decisions <= 0:
        return pd.DataFrame(columns=VALIDATION_COLUMNS)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(decisions), size=min(n_decisions, len(decisions)), replace=False))
    rows = []
    for i in pick:
        d = decisions.iloc[int(i)]
        check = checks[int(i)]
        for action, ev in check.values.items():
            mean, se = check.simulate(action, n_sims, rng)
            z = (mean - ev) / se if se > 0 else (0.0 if abs(mean - ev) < 1e-9 else math.inf)
            rows.append(
                {
                    "yardstick": LABEL,
                    "model_version": d["model_version"],
                    "variant": d["variant"],
                    **{c: d[c] for c in ("run_id", "session", "game", "round", "seat")},
                    "action": action.replace("verify:", "verify Q"),
                    "ev": round(ev, 10),
                    "ev_mc": round(mean, 10),
                    "mc_se": round(se, 10),
                    "z": round(z, 6),
                    "n_sims": n_sims,
                }
            )
    return pd.DataFrame(rows, columns=VALIDATION_COLUMNS)
