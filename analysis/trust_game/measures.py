"""Trust-game measures from exchanges.csv (one row per exchange), with cluster-bootstrap intervals.

Definitions (specs/trust_game.md; s sent, r returned, E endowment, k multiplier; cluster = one pair,
``run_id/session/pair``, over the whole of its repeated play):

- sent fraction: mean of s/E over exchanges;
- return ratio over exchanges with s > 0: the mean of r/(k·s), and the pooled Σr / Σk·s;
- efficiency: (k − 1)·Σs / ((k − 1)·E·exchanges) — realised over maximum surplus;
- reciprocity slope: OLS slope of r on s over exchanges;
- mean payoffs of the trustor and the trustee;
- repeated play: per-round means; the change in s after a round with r < s vs after r ≥ s (rounds with
  s > 0 that have a next round); the breakdown round: the first round with s = 0 after a positive s.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.stats import (
    MIN_CLUSTERS,
    Interval,
    bootstrap_totals,
    cluster_bootstrap_ratio,
    percentile_interval,
)

REQUIRED = (
    "run_id", "session", "pair", "round", "endowment", "multiplier", "sent", "received", "returned",
    "trustor_payoff", "trustee_payoff",
)  # fmt: skip
GROUP_COLUMNS = ("trustor", "trustor_model", "trustee", "trustee_model")
SETTING_COLUMNS = ("variant", "endowment", "trustee_endowment", "multiplier", "horizon", "history")
"""Settings split into separate rows of every table when they vary across the runs analysed."""


def check_exchanges(df: pd.DataFrame) -> pd.DataFrame:
    """Validate columns and amounts; return a sorted copy with ``cluster`` and derived columns."""
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"exchanges.csv lacks required column(s) {missing}")
    out = df.copy()
    for c in ("sent", "returned", "endowment", "multiplier", "round"):
        out[c] = pd.to_numeric(out[c], errors="raise").astype(float)
    bad = (out["sent"] < 0) | (out["sent"] > out["endowment"]) | (out["returned"] < 0)
    bad |= out["returned"] > out["multiplier"] * out["sent"]
    if bad.any():
        row = out.loc[bad].iloc[0]
        raise ValueError(
            f"exchanges.csv of run {row['run_id']}: pair {row['pair']} round {int(row['round'])} has sent "
            f"{row['sent']:g} / returned {row['returned']:g} outside 0..E / 0..k*sent"
        )
    for c in GROUP_COLUMNS:
        out[c] = out[c].astype(str) if c in out.columns else "unknown"
    out["cluster"] = (
        out["run_id"].astype(str) + "/" + out["session"].astype(str) + "/" + out["pair"].astype(str)
    )
    out["sent_fraction"] = out["sent"] / out["endowment"]
    out["kS"] = out["multiplier"] * out["sent"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["ratio"] = np.where(
            out["sent"] > 0, out["returned"] / out["kS"].where(out["kS"] > 0, 1.0), np.nan
        )
    out["surplus"] = (out["multiplier"] - 1) * out["sent"]
    out["max_surplus"] = (out["multiplier"] - 1) * out["endowment"]
    return out.sort_values(["cluster", "round"], kind="stable").reset_index(drop=True)


def _rng(seed: int, key: Sequence[object]) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("|".join(map(str, key)).encode())])


def _per_cluster(df: pd.DataFrame, cols: dict[str, pd.Series]) -> pd.DataFrame:
    work = pd.DataFrame({"cluster": df["cluster"], **cols})
    return work.groupby("cluster", sort=True).sum()


def ratio_interval(
    df: pd.DataFrame, num: pd.Series, den: pd.Series, rng: np.random.Generator, n: int, level: float
) -> Interval:
    """Cluster bootstrap of Σnum / Σden."""
    pc = _per_cluster(df, {"num": num, "den": den})
    return cluster_bootstrap_ratio(pc["num"], pc["den"], n_resamples=n, seed=rng, level=level)


def ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    """OLS slope of y on x (NaN when x does not vary)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    sxx = float(((x - x.mean()) ** 2).sum())
    return float(((x - x.mean()) * (y - y.mean())).sum() / sxx) if sxx > 0 else math.nan


def slope_interval(df: pd.DataFrame, rng: np.random.Generator, n: int, level: float) -> Interval:
    """Reciprocity slope (OLS of r on s) with a cluster-bootstrap interval (clusters resampled whole)."""
    x, y = df["sent"].to_numpy(float), df["returned"].to_numpy(float)
    est = ols_slope(x, y)
    pc = _per_cluster(df, {"n": pd.Series(1.0, index=df.index), "x": df["sent"], "y": df["returned"],
                           "xy": df["sent"] * df["returned"], "xx": df["sent"] ** 2})  # fmt: skip
    k = len(pc)
    if math.isnan(est):
        return Interval(math.nan, math.nan, math.nan, k, "sent does not vary (slope undefined)")
    if k < MIN_CLUSTERS:
        return Interval(est, math.nan, math.nan, k, f"{k} clusters (< {MIN_CLUSTERS}); no interval")
    t = bootstrap_totals(pc[["n", "x", "y", "xy", "xx"]].to_numpy(), n, rng)
    nn, sx, sy, sxy, sxx = t.T
    den = nn * sxx - sx**2
    with np.errstate(divide="ignore", invalid="ignore"):
        samples = np.where(den > 0, (nn * sxy - sx * sy) / np.where(den > 0, den, 1.0), np.nan)
    low, high = percentile_interval(samples, level)
    return Interval(est, low, high, k)


MEASURES = (
    "sent_fraction", "return_ratio_mean", "return_ratio_pooled", "efficiency", "reciprocity_slope",
    "trustor_payoff", "trustee_payoff",
)  # fmt: skip


def measures(
    df: pd.DataFrame, n: int = 2000, seed: int = 0, level: float = 0.95, key: Sequence[object] = ()
) -> dict[str, Interval]:
    """Every headline measure of one group of exchanges (already checked), with intervals."""
    pos = df[df["sent"] > 0]
    one = pd.Series(1.0, index=df.index)
    r = lambda name: _rng(seed, (*key, name))  # noqa: E731
    out = {
        "sent_fraction": ratio_interval(df, df["sent_fraction"], one, r("sent"), n, level),
        "return_ratio_mean": ratio_interval(
            pos, pos["ratio"], pd.Series(1.0, index=pos.index), r("rmean"), n, level
        )
        if len(pos)
        else Interval(math.nan, math.nan, math.nan, 0, "nothing was sent"),
        "return_ratio_pooled": ratio_interval(pos, pos["returned"], pos["kS"], r("rpool"), n, level)
        if len(pos)
        else Interval(math.nan, math.nan, math.nan, 0, "nothing was sent"),
        "efficiency": ratio_interval(df, df["surplus"], df["max_surplus"], r("eff"), n, level),
        "reciprocity_slope": slope_interval(df, r("slope"), n, level),
        "trustor_payoff": ratio_interval(df, df["trustor_payoff"].astype(float), one, r("pay_tr"), n, level),
        "trustee_payoff": ratio_interval(df, df["trustee_payoff"].astype(float), one, r("pay_te"), n, level),
    }
    return out


def group_keys(df: pd.DataFrame) -> list[str]:
    """The columns that define a group: both roles' agents and models, plus settings that vary."""
    varying = [c for c in SETTING_COLUMNS if c in df.columns and df[c].astype(str).nunique() > 1]
    return [*varying, *GROUP_COLUMNS]


def summary_table(df: pd.DataFrame, n: int = 2000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """One row per group: pairs, exchanges, every measure with its interval."""
    keys = group_keys(df)
    rows = []
    for key, g in df.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        row["pairs"] = g["cluster"].nunique()
        row["exchanges"] = len(g)
        row["exchanges_sent"] = int((g["sent"] > 0).sum())
        if "valid" in g.columns:
            row["invalid"] = int((~g["valid"].astype(str).str.lower().eq("true")).sum())
        for name, iv in measures(g, n, seed, level, key).items():
            row[name], row[f"{name}_low"], row[f"{name}_high"] = iv.estimate, iv.low, iv.high
        if "expected_return_error" in g.columns:
            err = pd.to_numeric(g["expected_return_error"], errors="coerce")
            row["expected_return_mae"] = float(err.mean()) if err.notna().any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def sent_distribution(df: pd.DataFrame) -> pd.DataFrame:
    """Share of exchanges per sent fraction s/E, per group (long form: group keys, sent_fraction, count, share)."""
    keys = group_keys(df)
    counts = df.groupby([*keys, "sent_fraction"], dropna=False).size().rename("count").reset_index()
    counts["share"] = counts["count"] / counts.groupby(keys, dropna=False)["count"].transform("sum")
    return counts


def per_round(df: pd.DataFrame, n: int = 2000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Per group and round: pairs playing, mean sent fraction and pooled return ratio with intervals."""
    keys = group_keys(df)
    rows = []
    for key, g in df.groupby([*keys, "round"], sort=True, dropna=False):
        row: dict[str, object] = dict(zip([*keys, "round"], key, strict=True))
        row["pairs"] = len(g)
        sf = ratio_interval(
            g, g["sent_fraction"], pd.Series(1.0, index=g.index), _rng(seed, (*key, "s")), n, level
        )
        pos = g[g["sent"] > 0]
        rr = (
            ratio_interval(pos, pos["returned"], pos["kS"], _rng(seed, (*key, "r")), n, level)
            if len(pos)
            else Interval(math.nan, math.nan, math.nan, 0)
        )
        for name, iv in (("sent_fraction", sf), ("return_ratio_pooled", rr)):
            row[name], row[f"{name}_low"], row[f"{name}_high"] = iv.estimate, iv.low, iv.high
        rows.append(row)
    return pd.DataFrame(rows)


def transitions(df: pd.DataFrame) -> pd.DataFrame:
    """Consecutive rounds of a pair: rounds with s > 0 and a next round, with ``low`` (r < s) and ``delta``
    (the next s minus this s, as a fraction of E)."""
    nxt = df.groupby("cluster", sort=False)["sent"].shift(-1)
    t = df.assign(next_sent=nxt)
    t = t[(t["sent"] > 0) & t["next_sent"].notna()].copy()
    t["low"] = t["returned"] < t["sent"]
    t["delta"] = (t["next_sent"] - t["sent"]) / t["endowment"]
    return t


def low_return_response(df: pd.DataFrame, n: int = 2000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Per group: mean change in s/E after a low return (r < s) and after r ≥ s, and their difference."""
    from analysis.stats import bootstrap_difference, cluster_sums

    t = transitions(df)
    keys = group_keys(df)
    rows = []
    for key, g in t.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        low, high = g[g["low"]], g[~g["low"]]
        row["after_low_n"], row["after_ok_n"] = len(low), len(high)
        for name, part in (("after_low", low), ("after_ok", high)):
            iv = (
                ratio_interval(
                    part, part["delta"], pd.Series(1.0, index=part.index), _rng(seed, (*key, name)), n, level
                )
                if len(part)
                else Interval(math.nan, math.nan, math.nan, 0)
            )
            row[name], row[f"{name}_low"], row[f"{name}_high"] = iv.estimate, iv.low, iv.high
        if len(low) and len(high):
            d = bootstrap_difference(cluster_sums(low["delta"], low["cluster"]), cluster_sums(high["delta"], high["cluster"]),
                                     n_resamples=n, seed=_rng(seed, (*key, "diff")), level=level)  # fmt: skip
        else:
            d = Interval(math.nan, math.nan, math.nan, 0)
        row["difference"], row["difference_low"], row["difference_high"] = d.estimate, d.low, d.high
        rows.append(row)
    return pd.DataFrame(rows)


def breakdown_rounds(df: pd.DataFrame) -> pd.DataFrame:
    """Per pair: the breakdown round (first round with s = 0 after a positive s; empty when none)."""
    out = []
    keys = group_keys(df)
    for cluster, g in df.groupby("cluster", sort=True):
        sent = g["sent"].to_numpy()
        rounds = g["round"].to_numpy()
        seen_positive = np.maximum.accumulate(sent > 0)
        after = np.flatnonzero((sent == 0) & np.concatenate([[False], seen_positive[:-1]]))
        row = {k: g[k].iloc[0] for k in keys}
        row.update(
            cluster=cluster,
            rounds=len(g),
            breakdown_round=float(rounds[after[0]]) if len(after) else math.nan,
        )
        out.append(row)
    return pd.DataFrame(out)


def breakdown_summary(b: pd.DataFrame) -> pd.DataFrame:
    """Per group: pairs, pairs that broke down, and the mean breakdown round among them."""
    keys = [c for c in b.columns if c not in ("cluster", "rounds", "breakdown_round")]
    agg = b.groupby(keys, dropna=False).agg(
        pairs=("cluster", "size"),
        broke=("breakdown_round", lambda s: int(s.notna().sum())),
        mean_breakdown_round=("breakdown_round", "mean"),
    )
    return agg.reset_index()
