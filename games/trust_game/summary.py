"""The end-of-run summary of a trust-game run: amounts sent and returned."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from trustsim.rundir import read_manifest
from trustsim.summary import Family, from_model, mean_by, number, on_model, read_rows


def summarize(run_dir: Path) -> Family:
    """What the end-of-run summary says about a finished run (see :mod:`trustsim.summary`)."""
    rows = read_rows(run_dir, "exchanges")
    pairs = len({(r.get("session"), r.get("pair")) for r in rows})
    sent = [number(r.get("sent")) or 0.0 for r in rows]
    endow = [number(r.get("endowment")) or 0.0 for r in rows]
    ratios = [v for v in (number(r.get("return_ratio")) for r in rows) if v is not None]
    fam = Family(f"trust game, {pairs} pairs, {len(rows)} exchanges")
    cell = read_manifest(run_dir).get("cell") or {}  # the roles' agents and models may differ
    fam.who = ", ".join(
        on_model(f"{r} {cell.get(r)}", cell.get(f"{r}_model")) for r in ("trustor", "trustee")
    )
    share_sent = sum(sent) / sum(endow) if sum(endow) else 0.0
    fam.lines.append(
        f"sent {mean(sent) if sent else 0:.2f} of {mean(endow) if endow else 0:.0f} on average ({share_sent:.0%}); "
        f"returned {mean(ratios) if ratios else 0:.0%} of what the trustee received"
    )
    per_round = mean_by(rows, "round", lambda r: number(r.get("sent")) or 0.0)
    if len(per_round) > 1:
        fam.series_name = "mean sent per round"
        fam.series = list(per_round.values())
        fam.series_labels = [str(k) for k in per_round]
    answers = [r.get("sent_valid", "") for r in rows if from_model(r, "trustor_model")]
    answers += [r.get("returned_valid", "") for r in rows if from_model(r, "trustee_model")]
    answers = [a for a in answers if a != ""]
    fam.count_answers(answers)
    fam.short = f"{pairs} pairs, sent {share_sent:.0%}, returned {mean(ratios) if ratios else 0:.0%}"
    return fam
