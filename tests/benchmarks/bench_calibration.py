"""Benchmark: calibration analysis of 10^6 prediction-outcome pairs with 1,000 cluster-bootstrap resamples.

Run: ``python tests/benchmarks/bench_calibration.py [--pairs 1000000] [--clusters 2000] [--resamples 1000]``.
Times (a) the measures with intervals (Brier, Murphy, log loss, ECE width/mass, bias) plus cross-fitted
Platt and isotonic recalibration for one group, and (b) the whole ``python -m analysis calibration``
command on a synthetic run directory of the same size (CSV reading, breakdowns, figures, report).
Probabilities are on a 0.01 grid (as stated by models); ``--continuous`` uses unrounded values.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.__main__ import main as analysis_main  # noqa: E402
from analysis.calibration.intervals import bootstrap_measures  # noqa: E402
from analysis.calibration.recalibrate import cross_fit  # noqa: E402


def synthetic(n: int, clusters: int, continuous: bool, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    c = rng.integers(0, clusters, n)
    p = rng.beta(2, 2, n)
    if not continuous:
        p = np.round(p, 2)
    truth = np.clip(0.15 + 0.8 * p + rng.normal(0, 0.1, clusters)[c], 0, 1)
    y = (rng.random(n) < truth).astype(float)
    return p, y, c


def core(p: np.ndarray, y: np.ndarray, c: np.ndarray, resamples: int) -> float:
    start = time.perf_counter()
    extra = {}
    for method in ("platt", "isotonic"):
        cf = cross_fit(p, y, c, method, 5, 0)
        extra[f"brier_{method}"] = (cf.p_oof - y) ** 2
    res = bootstrap_measures(p, y, c, n_resamples=resamples, seed=0, extra=extra)
    elapsed = time.perf_counter() - start
    print(
        f"  Brier {res['brier'].format(4)}  ECE {res['ece_width'].format(4)}  bias {res['bias'].format(4)}  "
        f"isotonic {res['brier_isotonic'].format(4)}"
    )
    return elapsed


def full_cli(p: np.ndarray, y: np.ndarray, c: np.ndarray, resamples: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "manifest.json").write_text(
            json.dumps({"run_id": "bench", "game": "arena", "status": "complete"})
        )
        n = p.size
        pd.DataFrame(
            {
                "run_id": "bench",
                "game_type": "arena",
                "cluster": [f"m{k}" for k in c],
                "model": "m",
                "agent": "llm",
                "subject": np.array(["tit_for_tat", "random(0.5)", "grim_trigger"])[c % 3],
                "subject_kind": "opponent",
                "game": c,
                "round": np.arange(n) % 50 + 1,
                "p": p,
                "outcome": y.astype(int),
                "source": "native",
            }
        ).to_csv(run / "predictions.csv", index=False)
        start = time.perf_counter()
        code = analysis_main(
            ["calibration", str(run), "--out", str(Path(tmp) / "rep"), "--resamples", str(resamples)]
        )
        elapsed = time.perf_counter() - start
        assert code == 0
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--clusters", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--continuous", action="store_true", help="unrounded probabilities")
    ap.add_argument("--skip-cli", action="store_true", help="only the core measures")
    args = ap.parse_args()
    p, y, c = synthetic(args.pairs, args.clusters, args.continuous)
    print(f"{args.pairs:,} pairs, {args.clusters} clusters, {args.resamples} resamples")
    t = core(p, y, c, args.resamples)
    print(f"core measures + intervals + cross-fitted recalibration: {t:.2f} s")
    if not args.skip_cli:
        t = full_cli(p, y, c, args.resamples)
        print(
            f"full `python -m analysis calibration` (CSV read, breakdowns by subject/game/round, figures): {t:.2f} s"
        )


if __name__ == "__main__":
    main()
