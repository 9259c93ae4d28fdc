"""Per-cell trust measures with cluster-bootstrap intervals and anchor-relative deltas.

A cell is one combination of :data:`~analysis.escape_room.schema.CELL_KEYS`. Only the agents under test (not the
scripted partner) are counted. The resampling cluster is the game in memoryless cells and the run
(``run_id`` × ``session``) in cells with memory. Each cell is resampled independently, from a generator
seeded by (seed, cell keys), so results do not depend on which other cells were loaded.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from analysis.escape_room.loader import TrustData
from analysis.escape_room.published import published_anchor
from analysis.escape_room.schedules import schedule_sort_key
from analysis.escape_room.schema import CELL_KEYS
from analysis.stats import MIN_CLUSTERS, Interval, bootstrap_totals, percentile_interval

AnchorMode = Literal["auto", "data", "published", "none"]

# measure name -> (numerator column, denominator column, subset); subsets: dc = D-correct, dw = D-wrong.
GAME_MEASURES: dict[str, tuple[str, str, str]] = {
    "volume": ("verifications", "one", "dc"),
    "partner_share": ("partner_verifications", "verifications", "dc"),
    "volume_dwrong": ("verifications", "one", "dw"),
    "partner_share_dwrong": ("partner_verifications", "verifications", "dw"),
    "protective_per_game": ("protective_verifications", "one", "dc"),
    "volunteers_per_game": ("volunteers", "one", "all"),
    "rounds_per_game": ("rounds", "one", "all"),
    "escape_rate": ("escaped", "one", "all"),
}
AGENT_MEASURES: dict[str, tuple[str, str]] = {
    "survival": ("survived", "one"),
    "coins_per_agent_game": ("score", "one"),
    "death_share_wrong_password": ("death_wrong_password", "died"),
    "death_share_no_volunteer": ("death_no_volunteer", "died"),
}
MEASURE_LABELS: dict[str, str] = {
    "volume": "verifications/game (D correct)",
    "partner_share": "partner share (D correct)",
    "volume_dwrong": "verifications/game (D wrong)",
    "partner_share_dwrong": "partner share (D wrong)",
    "protective_per_game": "protective verifications/game (D correct)",
    "volunteers_per_game": "volunteers/game",
    "rounds_per_game": "rounds/game",
    "escape_rate": "escape rate",
    "survival": "survival (agent-games)",
    "coins_per_agent_game": "coins per agent-game",
    "death_share_wrong_password": "deaths by wrong password (share)",
    "death_share_no_volunteer": "deaths by no volunteer (share)",
}
_SUBSET_NAMES = {"dc": "D-correct games", "dw": "D-wrong games", "all": "games"}


@dataclass
class CellResult:
    """Measures of one cell: intervals, plus the bootstrap samples deltas are built from."""

    keys: dict[str, str]
    n_runs: int
    n_games: int
    n_games_dcorrect: int
    n_games_dwrong: int
    n_clusters: int
    cluster_unit: str
    measures: dict[str, Interval] = field(default_factory=dict)
    samples: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``model / schedule / memory`` text (``/ team <composition>`` for a mixed team)."""
        team = self.keys.get("team")
        return f"{self.keys['model']} / {self.keys['schedule']} / {self.keys['memory']}" + (
            f" / team {team}" if team else ""
        )


@dataclass
class Delta:
    """An anchor-relative delta of one cell."""

    keys: dict[str, str]
    measure: str
    anchor_source: str
    interval: Interval


def cell_seed(seed: int, keys: dict[str, str], salt: str = "") -> np.random.Generator:
    """A generator seeded by (seed, cell keys, salt): independent streams per cell, order-free."""
    # An empty team (the default) leaves the text as it was before teams: intervals stay reproducible.
    parts = (f"{k}={keys.get(k, '')}" for k in CELL_KEYS if k != "team" or keys.get(k))
    text = "|".join([str(seed), salt, *parts])
    digest = hashlib.sha256(text.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def cluster_ids(frame: pd.DataFrame, memoryless: bool) -> pd.Series:
    """The resampling cluster of each row as an integer: game when memoryless, run (run × session)
    otherwise. Codes are consistent across the tidy tables of one :class:`TrustData` (``run_code``)."""
    run = (
        frame["run_code"] if "run_code" in frame else pd.Series(pd.factorize(frame["run_id"])[0], frame.index)
    )
    base = run.astype(np.int64) * (1 << 40) + frame["session"].astype(np.int64) * (1 << 20)
    return base + frame["game"].astype(np.int64) if memoryless else base


def _ratio_block(
    sums: pd.DataFrame,
    pairs: Sequence[tuple[str, str, str]],
    n_resamples: int,
    rng: np.random.Generator,
    level: float,
) -> tuple[dict[str, Interval], dict[str, np.ndarray]]:
    """Intervals for several ratios sharing the cluster sums ``sums`` and one set of resampled clusters."""
    out: dict[str, Interval] = {}
    samples: dict[str, np.ndarray] = {}
    n = len(sums)
    weights = n >= MIN_CLUSTERS
    if weights:
        cols = sorted({c for _, a, b in pairs for c in (a, b)})
        # (R, k): every resampled total at once, one weight-matrix product
        boot = bootstrap_totals(sums[cols].to_numpy(dtype=float), n_resamples, rng)
        col_index = {c: i for i, c in enumerate(cols)}
    for name, num, den in pairs:
        top = float(sums[num].sum()) if n else 0.0
        bottom = float(sums[den].sum()) if n else 0.0
        if n == 0:
            out[name] = Interval(math.nan, math.nan, math.nan, 0, "no games in this subset")
            continue
        if bottom == 0:
            out[name] = Interval(math.nan, math.nan, math.nan, n, f"{den} total is 0 (nothing to divide)")
            continue
        est = top / bottom
        if not weights:
            note = f"{n} cluster{'s' if n != 1 else ''} (< {MIN_CLUSTERS}); no interval"
            out[name] = Interval(est, math.nan, math.nan, n, note)
            continue
        t, b = boot[:, col_index[num]], boot[:, col_index[den]]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(b != 0, t / np.where(b != 0, b, 1.0), np.nan)
        low, high = percentile_interval(s, level)
        out[name] = Interval(est, low, high, n)
        samples[name] = s
    return out, samples


def _games_frame(data: TrustData) -> pd.DataFrame:
    g = data.games.copy()
    g["one"] = 1.0
    g["escaped"] = g["escaped"].astype(float)
    return g


def _agents_frame(data: TrustData) -> pd.DataFrame:
    a = data.agent_games[~data.agent_games["is_partner"]].copy()
    a["one"] = 1.0
    a["survived"] = a["survived"].astype(float)
    a["died"] = (a["survived"] == 0).astype(float)
    cause = a["death_cause"].fillna("").astype(str)
    a["death_wrong_password"] = (cause == "wrong_password").astype(float)
    a["death_no_volunteer"] = (cause == "no_volunteer").astype(float)
    a["score"] = pd.to_numeric(a["score"], errors="raise").astype(float)
    return a


def compute_cells(
    data: TrustData, *, n_resamples: int = 5000, seed: int = 0, level: float = 0.95
) -> list[CellResult]:
    """All measures of every cell in ``data``, sorted by model then schedule."""
    games = _games_frame(data)
    agents = _agents_frame(data)
    agent_groups = dict(iter(agents.groupby(list(CELL_KEYS), sort=False)))
    results: list[CellResult] = []
    for key_values, g in games.groupby(list(CELL_KEYS), sort=False):
        keys = dict(zip(CELL_KEYS, (str(v) for v in key_values), strict=True))
        memoryless = keys["memory"] == "none"
        g = g.assign(cluster=cluster_ids(g, memoryless))
        a = agent_groups.get(key_values, agents.iloc[0:0])
        a = a.assign(cluster=cluster_ids(a, memoryless))
        rng = cell_seed(seed, keys)
        res = CellResult(
            keys=keys,
            n_runs=int((g["run_id"].astype(str) + "#" + g["session"].astype(str)).nunique()),
            n_games=len(g),
            n_games_dcorrect=int(g["d_correct"].sum()),
            n_games_dwrong=int((~g["d_correct"]).sum()),
            n_clusters=int(g["cluster"].nunique()),
            cluster_unit="game" if memoryless else "run",
        )
        # Per-cluster sums of every subset side by side; subsets that cover the same clusters share one
        # resampling draw (one weight-matrix product for all their measures).
        game_cols = ["verifications", "partner_verifications", "protective_verifications", "volunteers",
                     "rounds", "escaped", "one"]  # fmt: skip
        agent_cols = sorted({c for pair in AGENT_MEASURES.values() for c in pair} | {"one"})
        parts = {
            "dc": g[g["d_correct"]].groupby("cluster")[game_cols].sum(),
            "dw": g[~g["d_correct"]].groupby("cluster")[game_cols].sum(),
            "all": g.groupby("cluster")[game_cols].sum(),
            "agent": a.groupby("cluster")[agent_cols].sum(),
        }
        wide = pd.concat({k: v for k, v in parts.items()}, axis=1).fillna(0.0)
        wide.columns = [f"{k}:{c}" for k, c in wide.columns]
        pairs_of = {
            sub: [
                (m, f"{sub}:{num}", f"{sub}:{den}")
                for m, (num, den, s_) in GAME_MEASURES.items()
                if s_ == sub
            ]
            for sub in ("dc", "dw", "all")
        }
        pairs_of["agent"] = [(m, f"agent:{num}", f"agent:{den}") for m, (num, den) in AGENT_MEASURES.items()]
        groups: dict[bytes, list[str]] = {}
        for sub in pairs_of:
            present = (
                (wide[f"{sub}:one"] > 0).to_numpy() if f"{sub}:one" in wide else np.zeros(len(wide), bool)
            )
            groups.setdefault(present.tobytes(), []).append(sub)
        for mask_bytes, subs in groups.items():
            mask = np.frombuffer(mask_bytes, dtype=bool)
            pairs = [p for sub in subs for p in pairs_of[sub]]
            intervals, samples = _ratio_block(wide[mask], pairs, n_resamples, rng, level)
            for sub in subs:
                for name, _, _ in pairs_of[sub]:
                    iv = intervals[name]
                    if iv.note and not iv.has_interval and sub != "agent":
                        iv = Interval(
                            iv.estimate, iv.low, iv.high, iv.n_clusters, f"{_SUBSET_NAMES[sub]}: {iv.note}"
                        )
                    res.measures[name] = iv
            res.samples.update(samples)
        results.append(res)
    results.sort(key=lambda r: (r.keys["model"], schedule_sort_key(r.keys["schedule"]), r.keys["memory"]))
    return results


@dataclass
class AnchorCell:
    """The anchor a delta is taken against: a data cell's samples, or a published point value."""

    source: str
    volume: Interval
    partner_share: Interval
    samples: dict[str, np.ndarray]


def anchor_cells(
    data: TrustData,
    cells: list[CellResult],
    *,
    mode: AnchorMode = "auto",
    n_resamples: int = 5000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[tuple[str, str, str], AnchorCell]:
    """Anchor per (model, agent, partner slot): memoryless D-correct games from the data, pooled over
    memoryless schedules (``data``), the study's published value (``published``), or data when present
    else published (``auto``)."""
    out: dict[tuple[str, str, str], AnchorCell] = {}
    models = sorted({(c.keys["model"], c.keys["agent"], c.keys["partner_slot"]) for c in cells})
    if mode == "none":
        return out
    g = _games_frame(data)
    mem = g[(g["memory"] == "none") & g["d_correct"]]
    for model, agent, slot in models:
        sub = mem[(mem["model"] == model) & (mem["agent"] == agent) & (mem["partner_slot"] == slot)]
        if mode in ("auto", "data") and len(sub):
            sources = {(str(sc), str(me)) for sc, me in zip(sub["schedule"], sub["memory"], strict=True)}
            single = next(
                (c for c in cells if len(sources) == 1 and c.keys["model"] == model and c.keys["agent"] == agent
                 and c.keys["partner_slot"] == slot and (c.keys["schedule"], c.keys["memory"]) in sources),
                None,
            )  # fmt: skip
            if single is not None:  # one memoryless cell: the anchor is that cell's D-correct measures
                out[(model, agent, slot)] = AnchorCell(
                    f"data: memoryless D-correct games ({single.keys['schedule']}; {len(sub)} games)",
                    single.measures["volume"],
                    single.measures["partner_share"],
                    {m: single.samples[m] for m in ("volume", "partner_share") if m in single.samples},
                )
                continue
            keys = {"model": model, "schedule": "anchor(pooled)", "memory": "none", "partner_slot": slot,
                    "agent": agent}  # fmt: skip
            sums = (
                sub.assign(cluster=cluster_ids(sub, True))
                .groupby("cluster")[["verifications", "partner_verifications", "one"]]
                .sum()
            )
            rng = cell_seed(seed, keys, "anchor")
            pairs = [
                ("volume", "verifications", "one"),
                ("partner_share", "partner_verifications", "verifications"),
            ]
            ivs, samples = _ratio_block(sums, pairs, n_resamples, rng, level)
            schedules = ", ".join(sorted(set(sub["schedule"])))
            out[(model, agent, slot)] = AnchorCell(
                f"data: memoryless D-correct games ({schedules}; {len(sub)} games)",
                ivs["volume"],
                ivs["partner_share"],
                samples,
            )
        elif mode in ("auto", "published") and (pub := published_anchor(model)) is not None:
            note = "published point value"
            out[(model, agent, slot)] = AnchorCell(
                f"published ({pub.model}, Chen 2026)",
                Interval(pub.volume, math.nan, math.nan, 0, note),
                Interval(pub.partner_share, math.nan, math.nan, 0, note),
                {},
            )
    return out


def compute_deltas(
    cells: list[CellResult], anchors: dict[tuple[str, str, str], AnchorCell], level: float = 0.95
) -> list[Delta]:
    """Δtrust (volume − anchor volume) and Δtarget (partner share − anchor share) for every cell with
    memory; the cell and the anchor were resampled independently, so their sample vectors subtract."""
    out: list[Delta] = []
    for cell in cells:
        if cell.keys["memory"] == "none":
            continue
        anchor = anchors.get((cell.keys["model"], cell.keys["agent"], cell.keys["partner_slot"]))
        for delta_name, measure in (("delta_trust", "volume"), ("delta_target", "partner_share")):
            iv = cell.measures[measure]
            if anchor is None:
                out.append(Delta(cell.keys, delta_name, "none",
                                 Interval(math.nan, math.nan, math.nan, iv.n_clusters,
                                          "no anchor for this model (no memoryless D-correct games)")))  # fmt: skip
                continue
            a_iv: Interval = getattr(anchor, measure)
            if math.isnan(iv.estimate) or math.isnan(a_iv.estimate):
                why = iv.note if math.isnan(iv.estimate) else f"anchor: {a_iv.note}"
                out.append(Delta(cell.keys, delta_name, anchor.source,
                                 Interval(math.nan, math.nan, math.nan, iv.n_clusters, why)))  # fmt: skip
                continue
            est = iv.estimate - a_iv.estimate
            cs = cell.samples.get(measure)
            if cs is None:
                interval = Interval(est, math.nan, math.nan, iv.n_clusters, iv.note or "cell has no interval")
            elif measure in anchor.samples:
                low, high = percentile_interval(cs - anchor.samples[measure], level)
                interval = Interval(est, low, high, min(iv.n_clusters, a_iv.n_clusters))
            elif anchor.samples or a_iv.n_clusters:
                interval = Interval(est, math.nan, math.nan, iv.n_clusters, f"anchor: {a_iv.note}")
            else:  # published point anchor: only the cell's uncertainty
                low, high = percentile_interval(cs - a_iv.estimate, level)
                interval = Interval(est, low, high, iv.n_clusters, "anchor is a published point value")
            out.append(Delta(cell.keys, delta_name, anchor.source, interval))
    return out


def per_game_curves(
    data: TrustData, *, n_resamples: int = 5000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Volume and partner share by game index per cell, with percentile intervals.

    Each replicate session (``run_id`` × ``session``) holds one game per index, so in every cell the
    sessions are resampled once, jointly for all game indices: one weight-matrix product gives every
    index's resampled totals. An index with fewer than 3 sessions gets no interval (``*_note`` says so).
    """
    g = _games_frame(data)
    alpha = (1 - level) / 2
    frames = []
    for key_values, cg in g.groupby(list(CELL_KEYS), sort=True):
        keys = dict(zip(CELL_KEYS, (str(v) for v in key_values), strict=True))
        session = cg["run_id"].astype(str) + "#" + cg["session"].astype(str)
        wide = cg.assign(session=session).pivot_table(
            index="session", columns="game", values=["verifications", "partner_verifications", "one", "d_correct"],
            aggfunc="sum", fill_value=0,
        )  # fmt: skip
        games = list(wide["one"].columns)
        v = wide["verifications"].to_numpy(float)
        p = wide["partner_verifications"].to_numpy(float)
        n = wide["one"].to_numpy(float)
        present = (n > 0).sum(axis=0)
        out = pd.DataFrame({k: keys[k] for k in CELL_KEYS}, index=range(len(games)))
        out["game"] = games
        out["games"] = n.sum(axis=0).astype(int)
        out["d_correct_share"] = wide["d_correct"].to_numpy(float).sum(axis=0) / n.sum(axis=0)
        out["verifications"] = v.sum(axis=0).astype(int)
        out["partner_verifications"] = p.sum(axis=0).astype(int)
        with np.errstate(divide="ignore", invalid="ignore"):
            out["volume"] = v.sum(0) / n.sum(0)
            out["partner_share"] = np.where(
                v.sum(0) > 0, p.sum(0) / np.where(v.sum(0) > 0, v.sum(0), 1), np.nan
            )
        lows = {m: np.full(len(games), np.nan) for m in ("volume", "partner_share")}
        highs = {m: np.full(len(games), np.nan) for m in ("volume", "partner_share")}
        if len(wide) >= MIN_CLUSTERS:
            boot = bootstrap_totals(np.hstack([v, p, n]), n_resamples, cell_seed(seed, keys, "curves"))
            k = len(games)
            bv, bp, bn = boot[:, :k], boot[:, k : 2 * k], boot[:, 2 * k :]
            with np.errstate(divide="ignore", invalid="ignore"):
                vol = np.where(bn > 0, bv / np.where(bn > 0, bn, 1), np.nan)
                share = np.where(bv > 0, bp / np.where(bv > 0, bv, 1), np.nan)
            for m, s in (("volume", vol), ("partner_share", share)):
                ok = np.isfinite(s).any(axis=0)
                if ok.any():
                    q = np.nanquantile(s[:, ok], [alpha, 1 - alpha], axis=0)
                    lows[m][ok], highs[m][ok] = q[0], q[1]
        for m in ("volume", "partner_share"):
            few = present < MIN_CLUSTERS
            lows[m][few] = np.nan
            highs[m][few] = np.nan
            out[f"{m}_low"], out[f"{m}_high"] = lows[m], highs[m]
            note = np.where(few, [f"{c} session(s) (< {MIN_CLUSTERS}); no interval" for c in present], "")
            if m == "partner_share":
                note = np.where(v.sum(0) == 0, "no verifications at this game index", note)
            out[f"{m}_note"] = note
        frames.append(out)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def verification_by_round(data: TrustData, memory: str = "none") -> pd.DataFrame:
    """Verifications per game by (model, agent, partner slot, round, target puzzle) over D-correct games of
    ``memory`` cells."""
    who = ["model", "agent", "partner_slot"]
    cols = [*who, "round", "target", "verifications", "games", "per_game"]
    d = data.decisions
    sel = d[(d["memory"] == memory) & d["d_correct"] & ~d["is_partner"] & (d["resolved_action"] == "verify")]
    games = data.games[(data.games["memory"] == memory) & data.games["d_correct"]]
    if sel.empty:
        return pd.DataFrame(columns=cols)
    n_games = games.groupby(who).size().rename("games").reset_index()
    out = sel.groupby([*who, "round", "target"]).size().rename("verifications").reset_index()
    out["target"] = out["target"].astype(int)
    out = out.merge(n_games, on=who, how="left")
    out["per_game"] = out["verifications"] / out["games"]
    return out[cols]
