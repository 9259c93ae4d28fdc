"""``python -m analysis yardstick DIR... --out OUT [--reference]``: the normative yardstick's tables and report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.cli_options import add_common_options, non_negative_int, positive_float
from analysis.text import interval_text, md_table
from analysis.yardstick.model import MODEL_VERSION, VARIANTS
from analysis.yardstick.score import LABEL, SYMMETRIC


def add_parser(subparsers: Any) -> None:
    """Register the ``yardstick`` subcommand."""
    p = subparsers.add_parser(
        "yardstick",
        help="escape-room decisions against a normative model: expected value per action, regret, protective "
        "verifications (a model-based yardstick, not the exact optimum of the game)",
        description=(
            "Score every escape-room decision of the seats under test against the yardstick's reference model "
            f"({LABEL}, model {MODEL_VERSION}): each partner's reliability from the exact posterior of the "
            "session's public evidence, teammates playing a stated policy (the variant), the game's elimination "
            "rule for every action, the coin a verification costs. Writes decisions.csv, summary.csv, "
            "validation.csv (Monte Carlo check) and report.md. See docs/yardstick.md."
        ),
    )
    add_common_options(
        p, resamples=2000, dirs_help="run, sweep or reference-log directory", dirs_optional=True
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="also score the reference study's logs shipped with trustsim (escape-room-v2, MIT licence)",
    )
    p.add_argument(
        "--variant",
        choices=(*VARIANTS, SYMMETRIC),
        default="team",
        help="the teammates' policy: team = the reference (bayes) rule on their exact beliefs, self_reliant = "
        "they pass, symmetric = the policy that is a best response when every seat plays it, where the "
        "iteration reaches one (default team; see docs/yardstick.md)",
    )
    p.add_argument("--prior-alpha", type=positive_float, default=1.0, help="Beta prior alpha (default 1)")
    p.add_argument("--prior-beta", type=positive_float, default=1.0, help="Beta prior beta (default 1)")
    p.add_argument(
        "--mc-decisions",
        type=non_negative_int,
        default=200,
        help="decisions whose expected values are re-estimated by Monte Carlo in validation.csv (default 200; 0: none)",
    )
    p.add_argument(
        "--mc-sims",
        type=non_negative_int,
        default=20_000,
        help="simulated games per action in that check (default 20000)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


MODEL_TEXT = (
    "each partner's reliability from the exact posterior of the session's public evidence (Beta({a:g}, {b:g}) "
    "prior), verifiers taken as exact, {teammates}, the partner passes, every action facing the game's "
    "elimination rule (if nobody volunteers, one live seat dies), a verification costing one coin, the seat "
    "then playing its best response"
)
TEAMMATES = {
    "team": "teammates playing the reference (bayes) rule on their exact beliefs",
    "self_reliant": "teammates passing",
    SYMMETRIC: "teammates playing the symmetric benchmark, the policy that is a best response when every seat "
    "plays it (iterated best responses from the reference rule; a decision whose iteration cycles has no value)",
}


def model_text(variant: str, prior: tuple[float, float]) -> str:
    """The model in one clause (``report.md``)."""
    return MODEL_TEXT.format(a=prior[0], b=prior[1], teammates=TEAMMATES[variant])


def report_text(
    tables: dict[str, pd.DataFrame],
    variant: str,
    prior: tuple[float, float],
    level: float,
) -> str:
    """``report.md``: what the yardstick is, the summary table and the Monte Carlo check."""
    summary, validation = tables["summary"], tables["validation"]
    lines = [
        f"# Escape-room yardstick (model {MODEL_VERSION})",
        "",
        f"**A {LABEL}.** Reference model `{MODEL_VERSION}`, variant `{variant}`: {model_text(variant, prior)}. "
        "Unit: expected score in coins (coins kept if the team escapes with the seat alive, else 0). Regret = "
        "best minus chosen expected score; a verification is *protective* when its expected value exceeds that "
        "of the best action without a verification, else *ritual*. See docs/yardstick.md.",
        "",
        f"Intervals: {level:.0%} cluster bootstrap (cluster: the game for memoryless runs, the session otherwise).",
        "",
    ]
    rows = [
        [
            str(r["source"]),
            str(r["model"]),
            f"{r['agent']}{f' (team {r.team})' if r['team'] else ''}",
            str(r["schedule"]),
            str(r["memory"]),
            str(r["n_decisions"]),
            interval_text(r["regret_mean"], r["regret_low"], r["regret_high"], alone=" (no interval)"),
            f"{r['best_share']:.2f}",
            str(r["n_verifications"]),
            interval_text(
                r["protective_share"], r["protective_low"], r["protective_high"], alone=" (no interval)"
            ),
        ]
        for _, r in summary.iterrows()
    ]
    header = ["source", "model", "agent", "schedule", "memory", "decisions", "mean regret", "best share"]
    lines += [md_table([*header, "verifications", "protective share"], rows), ""]
    if validation.empty:
        lines.append("Monte Carlo check: not run (--mc-decisions 0).")
    else:
        z = validation["z"].abs()
        lines.append(
            f"Monte Carlo check: {len(validation)} expected values of {validation[['run_id', 'session', 'game', 'round', 'seat']].drop_duplicates().shape[0]} "
            f"decisions re-estimated from {int(validation['n_sims'].iloc[0])} simulated games each; "
            f"max |z| = {z.max():.2f}, share with |z| > 3: {(z > 3).mean():.3f} (validation.csv)."
        )
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Execute the yardstick; returns the exit code."""
    from analysis.yardstick.pipeline import analyse_paths

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    dirs = list(args.dirs)
    if args.reference:
        from analysis.reference_data import ReferenceDataError, reference_dir

        try:
            dirs.append(reference_dir())
        except ReferenceDataError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        say(f"reference logs: {dirs[-1]}")
    if not dirs:
        print("error: give run, sweep or reference-log directories (DIR...) or --reference", file=sys.stderr)
        return 2
    prior = (args.prior_alpha, args.prior_beta)
    tables, loaded = analyse_paths(
        dirs,
        include_incomplete=args.include_incomplete,
        prior=prior,
        variant=args.variant,
        n_resamples=args.resamples,
        seed=args.seed,
        level=args.level,
        mc_decisions=args.mc_decisions,
        mc_sims=args.mc_sims,
        say=say,
    )
    for path, why in loaded.excluded:
        say(f"excluded {path}: {why}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False, lineterminator="\n")
    (out / "report.md").write_text(report_text(tables, args.variant, prior, args.level), encoding="utf-8")
    say(
        f"scored {len(tables['decisions'])} decisions in {len(tables['summary'])} cell(s); wrote {out} "
        f"in {time.perf_counter() - t0:.1f} s ({LABEL}, model {MODEL_VERSION})"
    )
    return 0
