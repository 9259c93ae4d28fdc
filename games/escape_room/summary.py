"""The end-of-run summary of an escape-room run: outcomes, verifications per game."""

from __future__ import annotations

from pathlib import Path

from trustsim.rundir import read_manifest
from trustsim.summary import TRUE, Family, from_model, mean_by, number, read_rows, share, who_played


def summarize(run_dir: Path) -> Family:
    """What the end-of-run summary says about a finished run (see :mod:`trustsim.summary`)."""
    games = read_rows(run_dir, "games")
    decisions = [
        r for r in read_rows(run_dir, "decisions") if r.get("is_partner") not in TRUE and from_model(r)
    ]
    sessions = len({r["session"] for r in games})
    n = len(games)
    outcomes: dict[str, int] = {}
    for g in games:
        outcomes[g.get("outcome", "")] = outcomes.get(g.get("outcome", ""), 0) + 1
    escaped = outcomes.pop("escaped", 0)
    all_dead = outcomes.pop("all_dead", 0)
    timed_out = outcomes.pop("max_rounds", 0)
    wrong_pw = sum(int(number(g.get("deaths_wrong_password")) or 0) for g in games)
    no_vol = sum(int(number(g.get("deaths_no_volunteer")) or 0) for g in games)
    fam = Family(f"escape room, {n} games" + (f" in {sessions} sessions" if sessions > 1 else ""))
    fam.who = who_played(read_manifest(run_dir), extras=("prompt", "memory", "schedule"))
    parts = [f"{escaped} escaped", f"{all_dead} lost with every seat dead"]
    if timed_out:
        parts.append(f"{timed_out} out of rounds")
    parts += [f"{v} {k}" for k, v in sorted(outcomes.items())]
    fam.lines.append(f"games: {', '.join(parts)}")
    fam.lines.append(
        f"seats eliminated, escaped games included: {no_vol} drawn when nobody volunteered, "
        f"{wrong_pw} for a wrong password"
    )
    per_game = mean_by(games, "game", lambda r: number(r.get("verifications")) or 0.0)
    escaped_by = mean_by(games, "game", lambda r: 1.0 if r.get("escaped") in TRUE else 0.0)
    d_wrong = sorted({int(g["game"]) for g in games if g.get("d_correct") not in TRUE and g.get("d_correct")})
    fam.series_name = "verifications per game" + (" (mean of sessions)" if sessions > 1 else "")
    fam.series = list(per_game.values())
    fam.series_labels = [str(k) for k in per_game]
    if sessions > 1:
        fam.extra_rows.append(("escaped", [share(round(v * 100), 100) for v in escaped_by.values()]))
    else:
        fam.extra_rows.append(("escaped", ["yes" if v else "no" for v in escaped_by.values()]))
    if d_wrong:
        fam.extra_rows.append(("partner", ["wrong" if k in d_wrong else "ok" for k in per_game]))
    total_verif = sum(number(g.get("verifications")) or 0 for g in games)
    partner = sum(number(g.get("partner_verifications")) or 0 for g in games)
    fam.lines.append(
        f"verifications: {total_verif:.0f} in all, {total_verif / max(n, 1):.2f} per game, "
        f"{partner:.0f} of them on the partner's puzzle"
    )
    fam.count_answers(r.get("valid", "") for r in decisions)
    fam.short = f"{n} games: {escaped} escaped, {all_dead} lost"
    return fam
