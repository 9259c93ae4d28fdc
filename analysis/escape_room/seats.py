"""Per-seat measures of escape-room teams: whom each model verifies when its teammates are other models.

A mixed team (``game.seats``) puts different agents and models in one game. Its cell is the team composition
(cell key ``team``), so runs of different compositions are never pooled; inside a cell this module splits
verifications by the verifying seat's player and the player whose puzzle was verified:

- a *player* is a seat's model (LLM seats) or agent name (scripted seats); the scripted partner is
  ``partner``;
- an *opportunity* is one decision of a tested seat × one other seat of the game (its puzzle is not the
  verifier's own): the verifier could have checked that seat's puzzle;
- ``rate`` = verifications of the target's puzzle ÷ opportunities (0–1), with a cluster-bootstrap interval
  over sessions (one cluster = one run's session); ``per_game`` = those verifications per seat-game.

:func:`seat_outcomes` adds each player's own results in the cell: survival, score and verifications per
seat-game (agent_games), so a model's payoff in a team of others can be set beside its verifying.

Example: in ``A=llm:m1;B=llm:m1;C=llm:m2`` the row (m1 → m2) says how often the two m1 seats checked the m2
seat, (m1 → m1) how often they checked each other, (m1 → partner) how often they checked D.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.escape_room.loader import TrustData
from analysis.escape_room.measures import cell_seed
from analysis.escape_room.schema import CELL_KEYS
from analysis.text import interval_text, md_table

PARTNER = "partner"
COLUMNS = (
    *CELL_KEYS,
    "verifier",
    "target",
    "seat_games",
    "opportunities",
    "verifications",
    "rate",
    "low",
    "high",
    "per_game",
    "clusters",
)


def player(agent: pd.Series, model: pd.Series, is_partner: pd.Series) -> pd.Series:
    """The player label of each seat row: its model for LLM seats, its agent for scripted ones, ``partner``."""
    agent = agent.fillna("").astype(str)
    model = model.fillna("").astype(str)
    label = model.where(~model.isin(["", "scripted"]), agent)
    return label.where(~is_partner.astype(bool), PARTNER)


def opportunities(data: TrustData) -> pd.DataFrame:
    """One row per (decision of a tested seat, other seat of its game): verifier, target, verified (0/1)."""
    d = data.decisions
    if d.empty:
        return pd.DataFrame(
            columns=[*CELL_KEYS, "cluster", "game_key", "seat", "verifier", "target", "verified"]
        )
    # Per-seat agent/model (run directories); imported reference logs have one model per cell: use it.
    missing = pd.Series(pd.NA, index=d.index, dtype="object")
    seat_agent = d.get("seat_agent", missing).astype("object").fillna(d["agent"])
    seat_model = d.get("seat_model", missing).astype("object").fillna(d["model"])
    d = d.assign(
        who=player(seat_agent, seat_model, d["is_partner"]),
        game_key=d["run_id"].astype(str) + "|" + d["session"].astype(str) + "|" + d["game"].astype(str),
        cluster=d["run_id"].astype(str) + "|" + d["session"].astype(str),
    )
    seats = d.drop_duplicates(["game_key", "seat"])[["game_key", "seat", "who", "own_puzzle"]]
    tested = d[~d["is_partner"].astype(bool)]
    pairs = tested.merge(seats, on="game_key", suffixes=("", "_target"))
    pairs = pairs[pairs["seat"] != pairs["seat_target"]]
    target_puzzle = pd.to_numeric(pairs["own_puzzle_target"], errors="coerce")
    chosen = pd.to_numeric(pairs["target"], errors="coerce")
    verified = (pairs["resolved_action"] == "verify") & (chosen == target_puzzle)
    return pd.DataFrame(
        {
            **{k: pairs[k].to_numpy() for k in CELL_KEYS},
            "cluster": pairs["cluster"].to_numpy(),
            "game_key": pairs["game_key"].to_numpy(),
            "seat": pairs["seat"].to_numpy(),
            "verifier": pairs["who"].to_numpy(),
            "target": pairs["who_target"].to_numpy(),
            "verified": verified.astype(int).to_numpy(),
        }
    )


def _interval(
    by_cluster: pd.DataFrame, rng: np.random.Generator, n_resamples: int, level: float
) -> tuple[float, float]:
    """Percentile interval of the pooled rate, resampling clusters with replacement (NaN under 3 clusters)."""
    n = len(by_cluster)
    if n < 3 or n_resamples <= 0:
        return float("nan"), float("nan")
    v = by_cluster["verified"].to_numpy(dtype=float)
    o = by_cluster["opportunities"].to_numpy(dtype=float)
    idx = rng.integers(0, n, size=(n_resamples, n))
    rates = v[idx].sum(axis=1) / np.maximum(o[idx].sum(axis=1), 1.0)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(rates, tail)), float(np.quantile(rates, 1.0 - tail))


def seat_verification(
    data: TrustData, *, n_resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Verification rate by cell × verifier player × target player (see the module docstring)."""
    opp = opportunities(data)
    if opp.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    rows = []
    for key_values, g in opp.groupby([*CELL_KEYS, "verifier", "target"], sort=True):
        keys = dict(zip([*CELL_KEYS, "verifier", "target"], (str(v) for v in key_values), strict=True))
        by_cluster = g.groupby("cluster").agg(
            verified=("verified", "sum"), opportunities=("verified", "size")
        )
        salt = f"seats|{keys['verifier']}|{keys['target']}"
        low, high = _interval(by_cluster, cell_seed(seed, keys, salt), n_resamples, level)
        # seat-games: each verifier seat's games in which this target seat (or seats) played
        seat_games = g.drop_duplicates(["game_key", "seat"]).shape[0]
        verifications = int(g["verified"].sum())
        rows.append(
            {
                **keys,
                "seat_games": seat_games,
                "opportunities": len(g),
                "verifications": verifications,
                "rate": verifications / len(g),
                "low": low,
                "high": high,
                "per_game": verifications / seat_games if seat_games else float("nan"),
                "clusters": len(by_cluster),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


OUTCOME_COLUMNS = (*CELL_KEYS, "player", "seats", "seat_games", "survival", "score", "verifications_per_game")


def seat_outcomes(data: TrustData) -> pd.DataFrame:
    """Per cell × player (tested seats only): seats it held (A, B, C), seat-games, survival share, mean score,
    verifications per seat-game."""
    a = data.agent_games
    if a.empty:
        return pd.DataFrame(columns=list(OUTCOME_COLUMNS))
    a = a[~a["is_partner"].astype(bool)]
    missing = pd.Series(pd.NA, index=a.index, dtype="object")
    who = player(
        a.get("seat_agent", missing).astype("object").fillna(a["agent"]),
        a.get("seat_model", missing).astype("object").fillna(a["model"]),
        a["is_partner"],
    )
    a = a.assign(
        player=who,
        score_num=pd.to_numeric(a["score"], errors="coerce"),
        verif_num=pd.to_numeric(a["verifications"], errors="coerce"),
    )
    out = (
        a.groupby([*CELL_KEYS, "player"], sort=True)
        .agg(
            seats=("seat", "nunique"),
            seat_games=("seat", "size"),
            survival=("survived", "mean"),
            score=("score_num", "mean"),
            verifications_per_game=("verif_num", "mean"),
        )
        .reset_index()
    )
    return out[list(OUTCOME_COLUMNS)]


def seat_matrix_md(table: pd.DataFrame) -> str:
    """Markdown: one block per mixed-team cell, verifier rows × target columns, ``rate [low, high]``."""
    mixed = table[table["team"].astype(str) != ""]
    if mixed.empty:
        return "_(no mixed team loaded)_"
    blocks = []
    for team, g in mixed.groupby("team", sort=True):
        for (schedule, memory), gg in g.groupby(["schedule", "memory"], sort=True):
            targets = sorted(gg["target"].unique(), key=lambda t: (t == PARTNER, t))
            rows = []
            for verifier, vg in gg.groupby("verifier", sort=True):
                cells = [str(verifier)]
                for t in targets:
                    row = vg[vg["target"] == t]
                    cells.append(_rate(row.iloc[0]) if len(row) else "")
                rows.append(cells)
            table = md_table(["verifier \\ target", *targets], rows)
            blocks.append(f"**{team}** ({schedule}, memory {memory})\n\n{table}")
    return "\n\n".join(blocks)


def _rate(row: pd.Series) -> str:
    return interval_text(row["rate"], row["low"], row["high"], alone=f" (n={row['opportunities']})")
