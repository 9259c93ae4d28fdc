"""Benchmark: does a plan made from a 5-session pilot reach its half-width? (issue 29, item 5)

Run: ``python tests/benchmarks/bench_plan.py [--studies 500] [--replications 100]``. Prints, with the CPU
time, wall time and load average:

1. bayes, every schedule × {volume, partner share}: pools of 600 sessions from one large run each (every
   session an independent draw, as new seeds give); per scenario ``--studies`` studies: a pilot of 5 distinct
   sessions, the plan (assurance 0.9, a target needing ~20 sessions), the planned number of other sessions,
   and the half-width the analysis reports (percentile cluster bootstrap). Per scenario and pooled: the share
   of studies within 1.1 W, the quantiles of half-width / W and of planned / needed (needed = the plan at the
   pool's own variance, whose expected half-width is W).
2. bayes with real jobs (``--replications`` of them): ``python -m trustsim`` jobs with new seeds for the pilot
   (runs=5) and the study (runs=planned), analysed by the trust analysis itself (``compute_cells``).
3. The literal reading of the issue: one pilot (seed 0), its plan, that planned study run many times.
4. The reference logs: cells with >= 10 sessions, pilots of 5 distinct sessions, studies drawn with
   replacement from the cell's sessions; volume and partner share.
5. Pilot size: the median and 90th percentile of planned / needed for pilots of 5, 10 and 20 sessions.
6. The price of stopping early: the half-width of a 95 % normal-mixture confidence sequence (valid at every
   session, tuned for n) over the fixed-n interval's.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import numpy as np  # noqa: E402

from analysis.escape_room.loader import load_trust_data  # noqa: E402
from analysis.escape_room.measures import compute_cells  # noqa: E402
from analysis.plan import clusters  # noqa: E402
from analysis.plan.design import fit, sessions_for_width, z_value  # noqa: E402
from analysis.plan.escape import load_cells  # noqa: E402
from analysis.plan.simulate import (  # noqa: E402
    Study,
    draw,
    needed_sessions,
    sessions_of,
    simulate,
    summarise,
    width_for,
)
from analysis.reference_data import reference_dir  # noqa: E402
from trustsim import api  # noqa: E402

SCHEDULES = ("smooth", "1strike", "mid2strike", "anchor")
MEASURES = ("volume", "partner_share")


def clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def took(start: tuple[float, float]) -> str:
    cpu, wall = clock()
    return f"CPU {cpu - start[0]:.1f} s, wall {wall - start[1]:.1f} s, load {os.getloadavg()[0]:.2f}"


def pools(root: Path, runs: int) -> dict[str, Path]:
    out = {}
    for experiment in SCHEDULES:
        result = api.run(
            experiment, ["agent=bayes", f"runs={runs}", "progress=false"], run_dir=root / experiment
        )
        out[experiment] = result.run_dir
    return out


def bayes_pools(paths: dict[str, Path], studies: int) -> None:
    start = clock()
    everything: list[Study] = []
    for k, experiment in enumerate(SCHEDULES):
        for measure in MEASURES:
            (cell,) = load_cells([paths[experiment]], measure, n_resamples=100)[0]
            population = sessions_of(cell.units)
            width = width_for(population, 20, 0.95)
            found = simulate(population, pilot=5, width=width, studies=studies, seed=k, pool=True)
            everything += found
            print("\n".join(summarise(found).lines(f"bayes {experiment} {measure}")))
    print("\n".join(summarise(everything).lines("bayes, every scenario pooled")))
    print(f"  ({took(start)})")


def real_jobs(replications: int, root: Path) -> None:
    """Pilot and study as real jobs with new seeds, analysed by the trust analysis (smooth, volume)."""
    start = clock()
    experiment = "smooth"
    pool_cell = load_cells([root / "pools" / experiment], "volume", n_resamples=100)[0][0]
    width = width_for(sessions_of(pool_cell.units), 20, 0.95)
    needed = needed_sessions(sessions_of(pool_cell.units), width, 0.95)
    studies = []
    for i in range(replications):
        pilot = api.run(experiment, ["agent=bayes", "runs=5", f"seed={1000 + i}", "progress=false"],
                        run_dir=root / "jobs" / f"pilot{i}")  # fmt: skip
        (cell,) = load_cells([pilot.run_dir], "volume", n_resamples=100)[0]
        plan = sessions_for_width(fit(cell.units), width, 0.95, 0.9)
        assert plan.sessions is not None
        study = api.run(experiment, ["agent=bayes", f"runs={plan.sessions}", f"seed={5000 + i}", "progress=false"],
                        run_dir=root / "jobs" / f"study{i}")  # fmt: skip
        (result,) = compute_cells(load_trust_data([study.run_dir]), n_resamples=2000, seed=i)
        iv = result.measures["volume"]
        studies.append(Study(width, needed, plan.sessions, (iv.high - iv.low) / 2))
    print("\n".join(summarise(studies).lines(f"bayes {experiment} volume, real jobs with new seeds")))
    print(f"  ({took(start)})")


def literal(paths: dict[str, Path], studies: int) -> None:
    """One pilot (the pool's first 5 sessions, i.e. seed 0 runs=5), its plan, that study many times."""
    start = clock()
    for experiment in SCHEDULES:
        (cell,) = load_cells([paths[experiment]], "volume", n_resamples=100)[0]
        population = sessions_of(cell.units)
        width = width_for(population, 20, 0.95)
        plan = sessions_for_width(fit(draw(population, np.arange(5))), width, 0.95, 0.9)
        assert plan.sessions is not None
        rng = np.random.default_rng(3)
        halves = []
        for _ in range(studies):
            picks = rng.choice(
                np.arange(5, len(population)), plan.sessions, replace=plan.sessions > len(population) - 5
            )
            iv = clusters.interval(draw(population, picks), n_resamples=1000, seed=rng, level=0.95)
            halves.append((iv.high - iv.low) / 2 / width)
        h = np.array(halves)
        print(
            f"bayes {experiment} volume, one pilot (sessions 0-4): plan {plan.sessions} sessions "
            f"(needed {needed_sessions(population, width, 0.95)}); within 1.1 W in {np.mean(h <= 1.1):.1%}, "
            f"half-width / W median {np.median(h):.2f}"
        )
    print(f"  ({took(start)})")


def reference(studies: int) -> None:
    start = clock()
    for measure in MEASURES:
        cells, _ = load_cells([reference_dir()], measure, n_resamples=100)
        found: list[Study] = []
        for seed, cell in enumerate(cells):
            population = sessions_of(cell.units)
            if cell.units.design != "session" or len(population) < 10:
                continue
            width = width_for(population, 20, 0.95)
            mine = simulate(population, pilot=5, width=width, studies=studies, seed=seed)
            s = summarise(mine)
            print(
                f"  {cell.label}: within 1.1 W {s.within_110:.1%}, planned/needed median {s.planned_quantiles[0.5]:.2f}"
            )
            found += mine
        print("\n".join(summarise(found).lines(f"reference {measure}, {len(found) // studies} cells")))
    print(f"  ({took(start)})")


def pilot_sizes(paths: dict[str, Path], studies: int) -> None:
    start = clock()
    for pilot in (5, 10, 20):
        found: list[Study] = []
        for k, experiment in enumerate(SCHEDULES):
            (cell,) = load_cells([paths[experiment]], "volume", n_resamples=100)[0]
            population = sessions_of(cell.units)
            width = width_for(population, 20, 0.95)
            found += simulate(population, pilot=pilot, width=width, studies=studies // 2, seed=k, pool=True)
        s = summarise(found)
        print(
            f"pilot of {pilot:2d} sessions (bayes volume, 4 schedules): planned / needed median "
            f"{s.planned_quantiles[0.5]:.2f}, 90% {s.planned_quantiles[0.9]:.2f}; within 1.1 W {s.within_110:.1%}"
        )
    print(f"  ({took(start)})")


def stopping_price(level: float = 0.95) -> None:
    """Normal-mixture confidence sequence (Robbins; Howard et al. 2021), two-sided, tuned for n: at n its
    half-width is σ·sqrt(2(n+ρ)/n² · log(sqrt((n+ρ)/ρ)/α)) with ρ = n·r; the best r over the fixed z·σ/√n."""
    alpha = 1 - level

    def ratio(r: float) -> float:
        return math.sqrt(2 * (1 + r) * math.log(math.sqrt((1 + r) / r) / alpha)) / z_value(level)

    best, r = min((ratio(r), r) for r in np.geomspace(0.01, 10, 2000))
    print(
        f"stopping early at {level:.0%}: a normal-mixture confidence sequence tuned for n (ρ = {r:.2f}·n) is "
        f"{best:.2f}x as wide as the fixed-n interval at n, so it needs {best**2:.1f}x the sessions for the same W"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=500)
    parser.add_argument("--replications", type=int, default=100)
    parser.add_argument("--pool", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        root = Path(tmp)
        start = clock()
        paths = pools(root / "pools", args.pool)
        print(f"bayes pools: {len(SCHEDULES)} runs of {args.pool} sessions ({took(start)})")
        bayes_pools(paths, args.studies)
        real_jobs(args.replications, root)
        literal(paths, args.studies)
        reference(max(1, args.studies // 10))
        pilot_sizes(paths, args.studies)
    stopping_price()


if __name__ == "__main__":
    main()
