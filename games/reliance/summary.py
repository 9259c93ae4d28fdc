"""The end-of-run summary of a reliance run: optimal decisions per stage."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from trustsim.summary import TRUE, Family, from_model, mean_by, number, read_rows, share


def summarize(run_dir: Path) -> Family:
    """What the end-of-run summary says about a finished run (see :mod:`trustsim.summary`)."""
    scenarios = read_rows(run_dir, "scenarios")
    stages = read_rows(run_dir, "stages")
    n = len(scenarios)
    optimal = sum(r.get("optimal") in TRUE for r in stages)
    all_opt = sum(r.get("all_optimal") in TRUE for r in scenarios)
    errors = sum(r.get("error") in TRUE for r in scenarios)
    regrets = [number(r.get("regret")) or 0.0 for r in stages]
    fam = Family(f"reliance, {n} scenarios, {len(stages)} decisions")
    fam.lines.append(
        f"optimal decisions {optimal} of {len(stages)} ({share(optimal, len(stages))}); scenarios played "
        f"optimally throughout {all_opt} ({share(all_opt, n)}); mean regret {mean(regrets) if regrets else 0:.3f}; "
        f"errors {errors}"
    )
    by_stage = mean_by(stages, "stage", lambda r: 1.0 if r.get("optimal") in TRUE else 0.0)
    fam.series_name = "share optimal per stage"
    fam.series = list(by_stage.values())
    fam.series_labels = [str(k) for k in by_stage]
    fam.count_answers(r.get("valid", "") for r in stages if from_model(r))
    fam.short = f"{n} scenarios, optimal {share(optimal, len(stages))} of decisions"
    return fam
