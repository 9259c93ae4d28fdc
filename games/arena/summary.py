"""The end-of-run summary of an arena run: pairings, cooperation per round."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from trustsim.summary import Family, from_model, mean_by, number, on_model, read_rows


def summarize(run_dir: Path) -> Family:
    """What the end-of-run summary says about a finished run (see :mod:`trustsim.summary`)."""
    matches = read_rows(run_dir, "matches")
    moves = read_rows(run_dir, "moves")
    n = len(matches)
    rounds = sum(int(number(m.get("rounds")) or 0) for m in matches)

    def avg(col: str) -> float:
        vals = [number(m.get(col)) for m in matches]
        return mean([v for v in vals if v is not None] or [0.0])

    fam = Family(f"arena (iterated prisoner's dilemma), {n} matches, {rounds} rounds")
    pairs = sorted({f"{m.get('player_a')} vs {m.get('player_b')}" for m in matches})
    players = sorted(
        {on_model(m.get(f"player_{s}"), m.get(f"model_{s}")) for m in matches for s in "ab"} - {"None"}
    )
    if len(players) > 2:  # a round robin: the players, not only the agent the config names
        fam.who = f"round robin of {len(players)} players"
        fam.lines.append("players: " + ", ".join(players))
    fam.lines.append(
        "pairings: " + "; ".join(pairs[:3]) + (f"; … ({len(pairs)} in all)" if len(pairs) > 3 else "")
    )
    fam.lines.append(
        f"cooperation: A {avg('coop_a'):.0%}, B {avg('coop_b'):.0%}, mutual {avg('mutual_coop'):.0%}, "
        f"mutual defection {avg('mutual_defect'):.0%}; mean payoff per round A {avg('mean_payoff_a'):.2f}, "
        f"B {avg('mean_payoff_b'):.2f}"
    )
    per_round = mean_by(moves, "round", lambda r: 1.0 if r.get("move") == "C" else 0.0)
    fam.series_name = "share cooperating per round"
    fam.series = list(per_round.values())
    fam.series_labels = [str(k) for k in per_round]
    fam.count_answers(r.get("valid", "") for r in moves if from_model(r))
    fam.short = f"{n} matches, cooperation A {avg('coop_a'):.0%} B {avg('coop_b'):.0%}"
    return fam
