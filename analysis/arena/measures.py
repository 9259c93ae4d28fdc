"""Per-match sums of the arena measures, from moves.csv (one row per player-round).

Definitions (executed moves; t is a round of the same match):
- cooperation rate: share of the player's moves that are C;
- mutual cooperation: share of rounds where both played C;
- first defection: the first round the player played D (matches where it never defected are counted apart);
- retaliation: P(player plays D at t+1 | player played C and the opponent D at t) — answering exploitation;
- forgiveness: P(player plays C at t+1 | opponent D at t-1, player D at t, opponent C at t) — returning to
  cooperation after its own retaliation once the opponent has come back.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CELL_COLUMNS = ("temptation", "horizon", "noise", "identity")
"""Match settings carried into the per-match table; the CLI splits tables by those that vary."""
REQUIRED = (
    "run_id",
    "match",
    "round",
    "seat",
    "player",
    "model",
    "opponent",
    "move",
    "opponent_move",
    "payoff",
)


def check_moves(moves: pd.DataFrame) -> pd.DataFrame:
    """Validate moves.csv columns and values; return a copy sorted by (run, match, seat, round)."""
    missing = [c for c in REQUIRED if c not in moves.columns]
    if missing:
        raise ValueError(f"moves.csv lacks required column(s) {missing}")
    bad = ~moves["move"].isin(["C", "D"]) | ~moves["opponent_move"].isin(["C", "D"])
    if bad.any():
        row = moves.loc[bad].iloc[0]
        raise ValueError(
            f"moves.csv of run {row['run_id']}: move {row['move']!r}/{row['opponent_move']!r} is not C or D"
        )
    out = moves.copy()
    for col in ("run_id", "match", "seat", "player", "model", "opponent"):
        out[col] = out[col].astype(str)
    return out.sort_values(["run_id", "match", "seat", "round"], kind="stable").reset_index(drop=True)


def per_match(moves: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, match, seat): counts and sums behind every measure (the bootstrap's clusters)."""
    m = check_moves(moves)
    key = ["run_id", "match", "seat"]
    g = m.groupby(key, sort=False)
    own_c = m["move"].eq("C")
    opp_c = m["opponent_move"].eq("C")
    nxt = g["move"].shift(-1)
    opp_prev = g["opponent_move"].shift(1)
    exploited = own_c & ~opp_c & nxt.notna()
    came_back = ~own_c & opp_c & opp_prev.eq("D") & nxt.notna()
    first_d = m["round"].where(~own_c)
    work = pd.DataFrame(
        {
            **{k: m[k] for k in key},
            "player": m["player"],
            "model": m["model"],
            "opponent": m["opponent"],
            "rounds": 1,
            "payoff": m["payoff"].astype(float),
            "coop": own_c.astype(float),
            "mutual": (own_c & opp_c).astype(float),
            "ret_den": exploited.astype(float),
            "ret_num": (exploited & nxt.eq("D")).astype(float),
            "for_den": came_back.astype(float),
            "for_num": (came_back & nxt.eq("C")).astype(float),
            "first_defection": first_d,
        }
    )
    cells = [c for c in CELL_COLUMNS if c in m.columns]
    for c in cells:
        work[c] = m[c]
    agg = work.groupby(key, sort=False).agg(
        **{c: (c, "first") for c in cells},
        player=("player", "first"),
        model=("model", "first"),
        opponent=("opponent", "first"),
        rounds=("rounds", "sum"),
        payoff=("payoff", "sum"),
        coop=("coop", "sum"),
        mutual=("mutual", "sum"),
        ret_num=("ret_num", "sum"),
        ret_den=("ret_den", "sum"),
        for_num=("for_num", "sum"),
        for_den=("for_den", "sum"),
        first_defection=("first_defection", "min"),
    )
    agg = agg.reset_index()
    agg["defected"] = agg["first_defection"].notna().astype(float)
    agg["first_defection_sum"] = agg["first_defection"].fillna(0.0)
    agg["cluster"] = agg["run_id"] + "/" + agg["match"]
    return agg


def ratio(df: pd.DataFrame, num: str, den: str) -> float:
    """sum(num) / sum(den), NaN when the denominator is 0."""
    d = float(df[den].sum())
    return float(df[num].sum()) / d if d else float("nan")


def joint_codes(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Joint move code per round: 0 = CC, 1 = CD, 2 = DC, 3 = DD (first letter = row player)."""
    return (a.eq("D").to_numpy().astype(int) * 2) + b.eq("D").to_numpy().astype(int)
