"""The benchmark's metrics: blueprint-macro accuracy, all-stage success, regret, pairs, support comparison,
breakdowns and diagnostic subsets, with blueprint bootstrap (shared resamples) and Wilson intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.stats import percentile_interval, resample_weights, wilson_interval

MAIN_SETS = ("main", "all")
MIN_BLUEPRINTS = 10
"""A system's main metrics resting on fewer blueprints than this are flagged ``underpowered`` in ``note``
(the bootstrap resamples blueprints; with fewer than 3 there is no interval at all)."""
MIN_INTERVAL_BLUEPRINTS = 3


def _interval(est: float, samples: np.ndarray, level: float) -> tuple[float, float, float]:
    finite = samples[np.isfinite(samples)]
    if math.isnan(est) or finite.size < 2:
        return est, math.nan, math.nan
    low, high = percentile_interval(finite, level)
    return est, low, high


def main_decisions(stages: pd.DataFrame) -> pd.DataFrame:
    """Decisions of the main benchmark (not pairs, not the support variant)."""
    m = stages["set"].isin(MAIN_SETS) & ~stages["show_posterior"].astype(bool)
    return stages[m]


def blueprint_table(df: pd.DataFrame, blueprints: list[str]) -> pd.DataFrame:
    """Per blueprint sums: reached decisions, optimal ones, regret sum/count, scenarios, all-stage successes."""
    g = df.groupby("blueprint")
    regret_ok = df["valid"].astype(bool) & (df["value_range"] > 1e-9) & df["regret"].notna()
    out = pd.DataFrame(
        {
            "decisions": g.size(),
            "optimal": g["optimal"].sum(),
            "regret_sum": df[regret_ok].groupby("blueprint")["regret"].sum(),
            "regret_n": df[regret_ok].groupby("blueprint").size(),
        }
    )
    return out.reindex(blueprints).fillna({"regret_sum": 0.0, "regret_n": 0.0})


def main_metrics(
    stages: pd.DataFrame, scenarios: pd.DataFrame, n_resamples: int, seed: int, level: float
) -> pd.DataFrame:
    """One row per system: blueprint-macro accuracy, all-stage success, normalised regret, invalid rate,
    each with a blueprint bootstrap interval computed from one resample matrix shared by every system."""
    dec = main_decisions(stages)
    if dec.empty:
        return pd.DataFrame()
    blueprints = sorted(dec["blueprint"].unique())
    W = resample_weights(len(blueprints), n_resamples, seed).astype(float)
    scen = scenarios[scenarios["set"].isin(MAIN_SETS) & ~scenarios["show_posterior"].astype(bool)]
    rows = []
    for system, d in dec.groupby("system"):
        bt = blueprint_table(d, blueprints)
        avail = bt["decisions"].notna().to_numpy() & (bt["decisions"].fillna(0) > 0).to_numpy()
        acc = (bt["optimal"] / bt["decisions"]).to_numpy(dtype=float)
        w = W[:, avail]
        macro = float(np.nanmean(acc[avail]))
        with np.errstate(invalid="ignore", divide="ignore"):  # resamples without this system's blueprints
            macro_s = (w @ acc[avail]) / w.sum(axis=1)
        reg_num = bt["regret_sum"].to_numpy(dtype=float)
        reg_den = bt["regret_n"].to_numpy(dtype=float)
        regret = reg_num.sum() / reg_den.sum() if reg_den.sum() else math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            regret_s = (W @ reg_num) / (W @ reg_den)
        s = scen[scen["system"] == system].groupby("blueprint")
        succ = s["all_optimal"].sum().reindex(blueprints).fillna(0).to_numpy(dtype=float)
        n_sc = s.size().reindex(blueprints).fillna(0).to_numpy(dtype=float)
        allstage = succ.sum() / n_sc.sum() if n_sc.sum() else math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            allstage_s = (W @ succ) / (W @ n_sc)
        invalid = float((~d["valid"].astype(bool)).mean())
        row = {
            "system": system,
            "blueprints": int(avail.sum()),
            "decisions": len(d),
            "scenarios": int(n_sc.sum()),
        }
        n_bp = int(avail.sum())
        for name, est, samples in (
            ("macro_accuracy", macro, macro_s),
            ("all_stage_success", allstage, allstage_s),
            ("normalised_regret", regret, regret_s),
        ):
            e, lo, hi = _interval(est, samples, level)
            if n_bp < MIN_INTERVAL_BLUEPRINTS:  # a resample of 1-2 blueprints only repeats them
                lo = hi = math.nan
            row.update({name: e, f"{name}_low": lo, f"{name}_high": hi})
        row["invalid_rate"] = invalid
        notes = []
        if n_bp < MIN_BLUEPRINTS:
            notes.append(f"underpowered: {n_bp} blueprint{'s' if n_bp != 1 else ''} (< {MIN_BLUEPRINTS})")
        if n_bp < MIN_INTERVAL_BLUEPRINTS:
            notes.append(f"no interval (< {MIN_INTERVAL_BLUEPRINTS} blueprints)")
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows)


def _wilson_row(k: int, n: int, level: float) -> dict[str, float]:
    if n == 0:
        return {"k": 0, "n": 0, "share": math.nan, "low": math.nan, "high": math.nan}
    lo, hi = wilson_interval(k, n, level)
    return {"k": k, "n": n, "share": k / n, "low": lo, "high": hi}


def breakdown(stages: pd.DataFrame, by: str, level: float) -> pd.DataFrame:
    """Pooled accuracy of main decisions by ``by`` (category, process or stage), with Wilson intervals."""
    dec = main_decisions(stages)
    rows = []
    for (system, key), d in dec.groupby(["system", by]):
        rows.append({"system": system, by: key, **_wilson_row(int(d["optimal"].sum()), len(d), level)})
    return pd.DataFrame(rows)


def diagnostics(stages: pd.DataFrame, level: float) -> pd.DataFrame:
    """Diagnostic subsets of valid main decisions (share with Wilson interval, per system)."""
    dec = main_decisions(stages)
    dec = dec[dec["valid"].astype(bool)]
    subsets = {
        # name: (rows in the subset's denominator, rows counted)
        "unnecessary_tests": (lambda d: d["is_test"].astype(bool), lambda d: ~d["optimal"].astype(bool)),
        "zero_benefit_tests": (lambda d: d["is_test"].astype(bool), lambda d: d["zero_benefit_test"].astype(bool)),
        "skipped_useful_tests": (lambda d: d["useful_test_available"].astype(bool), lambda d: ~d["is_test"].astype(bool)),
        "myopic_where_learning_pays": (lambda d: d["learning_pays"].astype(bool), lambda d: d["myopic"].astype(bool)),
        "wrong_support_target": (
            lambda d: d["support_optimal"].astype(bool) & (d["action_kind"] == "support"),
            lambda d: ~d["optimal"].astype(bool),
        ),
        "over_protection": (
            lambda d: d["actions"].str.contains("backup", regex=False) & ~d["protective_optimal"].astype(bool),
            lambda d: d["protective"].astype(bool),
        ),
    }  # fmt: skip
    rows = []
    for system, d in dec.groupby("system"):
        for name, (den, num) in subsets.items():
            sub = d[den(d).to_numpy()]
            k = int(num(sub).sum()) if len(sub) else 0
            rows.append({"system": system, "subset": name, **_wilson_row(k, len(sub), level)})
    return pd.DataFrame(rows)


def pair_metrics(stages: pd.DataFrame, level: float) -> pd.DataFrame:
    """Pair accuracy (both sides optimal) and relation agreement (choices change iff the reference does)."""
    pairs = stages[stages["set"] == "pairs"]
    rows = []
    for system, d in pairs.groupby("system"):
        acc = agree = n = 0
        stable_n = stable_ok = 0
        # pair_stable is part of the key: runs made before pair ids were unique reused one id for a
        # differing and a stable pair of the same scenario.
        keys = [k for k in ("run_id", "session") if k in d.columns] + ["pair", "pair_stable"]
        for _, g in d.groupby(keys):
            if set(g["pair_side"]) != {"a", "b"}:
                continue
            n += 1
            a = g[g["pair_side"] == "a"].iloc[0]
            b = g[g["pair_side"] == "b"].iloc[0]
            acc += bool(a["optimal"]) and bool(b["optimal"])
            stable = bool(a["pair_stable"])
            both_valid = bool(a["valid"]) and bool(b["valid"])
            ok = both_valid and ((a["action"] == b["action"]) == stable)
            agree += ok
            stable_n += stable
            stable_ok += stable and ok
        for name, k, m in (
            ("pair_accuracy", acc, n),
            ("relation_agreement", agree, n),
            ("stable_pair_agreement", stable_ok, stable_n),
        ):
            rows.append({"system": system, "metric": name, **_wilson_row(k, m, level)})
    return pd.DataFrame(rows)


def support_comparison(stages: pd.DataFrame, level: float) -> pd.DataFrame:
    """Baseline vs belief-support decisions at identical (scenario, history): improved / worsened counts."""
    base = stages[~stages["show_posterior"].astype(bool) & (stages["set"] != "pairs")]
    sup = stages[stages["show_posterior"].astype(bool)]
    rows = []
    for system, s in sup.groupby("system"):
        keys = ["scenario", "history"] + (["session"] if "session" in stages.columns else [])
        b = base[base["system"] == system].drop_duplicates(keys)
        m = s.drop_duplicates(keys).merge(b, on=keys, suffixes=("_sup", "_base"))
        if m.empty:
            rows.append({"system": system, "matched": 0, "improved": 0, "worsened": 0, "net": 0})
            continue
        ob = m["optimal_base"].astype(bool)
        os_ = m["optimal_sup"].astype(bool)
        improved = int((~ob & os_).sum())
        worsened = int((ob & ~os_).sum())
        row = {
            "system": system,
            "matched": len(m),
            "improved": improved,
            "worsened": worsened,
            "net": improved - worsened,
            "baseline_accuracy": float(ob.mean()),
            "support_accuracy": float(os_.mean()),
        }
        changed = improved + worsened
        if changed:
            lo, hi = wilson_interval(improved, changed, level)
            row.update(improved_share_of_changes=improved / changed, improved_low=lo, improved_high=hi)
        rows.append(row)
    return pd.DataFrame(rows)
