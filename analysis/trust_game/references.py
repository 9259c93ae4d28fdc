"""Human reference points for the trust game (specs/trust_game.md), and comparisons with intervals.

- Berg, Dickhaut & McCabe (1995), "Trust, Reciprocity, and Social History", Games and Economic Behavior 10,
  122–142: the no-history treatment's 32 trustors (endowment 10) and the amounts they sent.
- Johnson & Mislin (2011), "Trust games: A meta-analysis", Journal of Economic Psychology 32, 865–889:
  162 replications, > 23,000 participants; mean fraction sent ≈ 0.50 and mean fraction of the received
  amount returned ≈ 0.37. Approximate reference points (no interval is given here), labelled so.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd

from analysis.stats import (
    RatioInput,
    bootstrap_difference,
    cluster_bootstrap_ratio,
    cluster_sums,
    wilson_interval,
)

BERG_1995_SENT: dict[int, int] = {0: 2, 1: 2, 2: 2, 3: 4, 4: 2, 5: 6, 6: 5, 7: 3, 8: 1, 10: 5}
"""Berg et al. (1995), no-history treatment: amount sent (of 10) → number of trustors (32)."""
BERG_SOURCE = "Berg, Dickhaut & McCabe 1995, no-history treatment (32 trustors)"
JM_SOURCE = "Johnson & Mislin 2011 meta-analysis (approximate)"
JM_SENT_FRACTION = 0.50
JM_RETURN_FRACTION = 0.37


def berg_fractions() -> np.ndarray:
    """One sent fraction s/10 per Berg trustor."""
    return np.repeat(np.array(list(BERG_1995_SENT), dtype=float) / 10.0, list(BERG_1995_SENT.values()))


def berg_distribution() -> pd.Series:
    """Share of Berg's trustors per sent fraction."""
    f = pd.Series(berg_fractions())
    return f.value_counts(normalize=True).sort_index()


def _rng(seed: int, *key: object) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("|".join(map(str, key)).encode())])


def total_variation(shares: pd.Series, reference: pd.Series) -> float:
    """Total variation distance between two distributions over sent fractions (0 = identical, 1 = disjoint)."""
    idx = shares.index.union(reference.index)
    return float(0.5 * (shares.reindex(idx, fill_value=0) - reference.reindex(idx, fill_value=0)).abs().sum())


def comparisons(
    df: pd.DataFrame, keys: list[str], n: int = 2000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Per group, each measure against its human reference: the group's value, the reference's value and
    interval (where the reference has one), and the difference with an interval.

    Berg's sent fraction and share sending something come from the 32 trustors (bootstrap / Wilson); the
    difference resamples the group's pairs and Berg's trustors independently. Johnson & Mislin's values are
    point references: the difference's interval is the group's own interval shifted.
    """
    berg = berg_fractions()
    berg_cell = RatioInput.of(berg, np.ones_like(berg))
    berg_iv = cluster_bootstrap_ratio(
        berg, np.ones_like(berg), n_resamples=n, seed=_rng(seed, "berg"), level=level
    )
    berg_any = int((berg > 0).sum())
    berg_any_iv = wilson_interval(berg_any, len(berg), level)
    rows = []
    for key, g in df.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(keys, key, strict=True))
        first = g[
            g["round"] == g.groupby("cluster")["round"].transform("min")
        ]  # one-shot / first-round behaviour
        cell = cluster_sums(first["sent_fraction"], first["cluster"])
        d = bootstrap_difference(cell, berg_cell, n_resamples=n, seed=_rng(seed, *key, "d_berg"), level=level)
        rows.append({**base, "measure": "sent fraction (first round)", "reference": BERG_SOURCE,
                     "value": cell.estimate, "reference_value": berg_iv.estimate, "reference_low": berg_iv.low,
                     "reference_high": berg_iv.high, "difference": d.estimate, "difference_low": d.low,
                     "difference_high": d.high})  # fmt: skip
        any_sent = cluster_sums((first["sent"] > 0).astype(float), first["cluster"])
        d_any = bootstrap_difference(any_sent, RatioInput.of((berg > 0).astype(float), np.ones_like(berg)),
                                     n_resamples=n, seed=_rng(seed, *key, "d_any"), level=level)  # fmt: skip
        rows.append({**base, "measure": "share sending something (first round)", "reference": BERG_SOURCE,
                     "value": any_sent.estimate, "reference_value": berg_any / len(berg),
                     "reference_low": berg_any_iv[0], "reference_high": berg_any_iv[1],
                     "difference": d_any.estimate, "difference_low": d_any.low, "difference_high": d_any.high})  # fmt: skip
        shares = first["sent_fraction"].value_counts(normalize=True)
        rows.append({**base, "measure": "sent distribution: total variation distance", "reference": BERG_SOURCE,
                     "value": total_variation(shares, berg_distribution()), "reference_value": 0.0,
                     "reference_low": math.nan, "reference_high": math.nan, "difference": math.nan,
                     "difference_low": math.nan, "difference_high": math.nan})  # fmt: skip
        for measure, ref, num, den, part in (
            ("sent fraction", JM_SENT_FRACTION, "sent_fraction", None, g),
            ("return ratio (pooled)", JM_RETURN_FRACTION, "returned", "kS", g[g["sent"] > 0]),
        ):
            if part.empty:
                continue
            pc = pd.DataFrame({"c": part["cluster"], "num": part[num],
                               "den": part[den] if den else 1.0}).groupby("c").sum()  # fmt: skip
            iv = cluster_bootstrap_ratio(
                pc["num"], pc["den"], n_resamples=n, seed=_rng(seed, *key, measure), level=level
            )
            rows.append({**base, "measure": measure, "reference": JM_SOURCE, "value": iv.estimate,
                         "reference_value": ref, "reference_low": math.nan, "reference_high": math.nan,
                         "difference": iv.estimate - ref, "difference_low": iv.low - ref,
                         "difference_high": iv.high - ref})  # fmt: skip
    return pd.DataFrame(rows)
