"""Load escape-room runs (run, sweep or reference-log directories) and score them: the yardstick's tables."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.cli_options import CommonOptions, with_reference
from analysis.progress import step
from analysis.rundirs import DataWarning, RunDirError, discover_runs
from analysis.yardstick.score import DECISION_COLUMNS, Scored, score_runs
from analysis.yardstick.summary import summarise, validate
from analysis.yardstick.traces import RunTrace, engine_trace, iter_reference_traces


@dataclass
class Loaded:
    """The runs found, and what was set aside (path, reason)."""

    runs: list[RunTrace] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)


def load(paths: Iterable[str | Path], *, include_incomplete: bool = False) -> Loaded:
    """Every escape-room run under ``paths``: trustsim run/sweep directories (through the one reader) and
    folders of the reference study's logs (``experiment_settings.json`` + ``game_*.json``)."""
    from trustsim.rundir.reference_logs import ReferenceLogError

    out = Loaded()
    roots = [Path(p) for p in paths]
    found = discover_runs(roots, include_incomplete=include_incomplete, game="escape_room")
    out.excluded += [(str(p), why) for p, why in found.excluded]
    for run in found.runs:
        trace = engine_trace(run)
        if trace.games:
            out.runs.append(trace)
        else:
            out.excluded.append((str(run.path), "no game with intact events"))
    for root in roots:
        try:
            for trace in iter_reference_traces(root):
                out.runs.append(trace)
        except ReferenceLogError as exc:
            warnings.warn(f"{exc}; skipped that reference run", DataWarning, stacklevel=2)
    if not out.runs:
        detail = "; ".join(f"{p}: {why}" for p, why in out.excluded[:3])
        raise RunDirError(
            "no escape-room run or reference-log directory with games under "
            + ", ".join(str(p) for p in roots)
            + (f" ({detail})" if detail else "")
        )
    return out


def decisions_table(
    runs: list[RunTrace], *, prior: tuple[float, float], variant: str
) -> tuple[pd.DataFrame, list[Scored]]:
    """Every scored decision, in a stable order (source, run, session, game, round, seat), and each one's
    :class:`Scored` (same order; its ``simulate`` is the Monte Carlo check)."""
    rows = score_runs(runs, prior, variant)
    states = [row.pop("_check") for row in rows]
    df = pd.DataFrame(rows, columns=DECISION_COLUMNS)
    if df.empty:
        return df, states
    df["target"] = df["target"].astype("Int64")
    df = df.sort_values(["source", "run_id", "session", "game", "round", "seat"], kind="stable")
    states = [states[i] for i in df.index]
    return df.reset_index(drop=True), states


@dataclass(frozen=True)
class YardstickOptions(CommonOptions):
    """The options of ``python -m analysis yardstick`` (its flags) that the computation reads."""

    reference: bool = False
    variant: str = "team"
    prior_alpha: float = 1.0
    prior_beta: float = 1.0
    mc_decisions: int = 200
    mc_sims: int = 20_000

    @property
    def prior(self) -> tuple[float, float]:
        """The Beta prior (alpha, beta) of each partner's reliability."""
        return (self.prior_alpha, self.prior_beta)


@dataclass
class Yardstick:
    """The yardstick's tables (``decisions``, ``summary``, ``validation``) and what was read."""

    tables: dict[str, pd.DataFrame]
    loaded: Loaded


def compute(
    paths: Iterable[str | Path], options: YardstickOptions, *, say: Callable[[str], None] = lambda _: None
) -> Yardstick:
    """The yardstick over ``paths`` (and the shipped reference logs with ``options.reference``)."""
    dirs = with_reference([str(p) for p in paths], options.reference)
    if not dirs:
        raise RunDirError("give run, sweep or reference-log directories (DIR...) or --reference")
    tables, loaded = analyse_paths(
        dirs,
        include_incomplete=options.include_incomplete,
        prior=options.prior,
        variant=options.variant,
        n_resamples=options.resamples,
        seed=options.seed,
        level=options.level,
        mc_decisions=options.mc_decisions,
        mc_sims=options.mc_sims,
        say=say,
    )
    return Yardstick(tables, loaded)


def analyse_paths(
    paths: Iterable[str | Path],
    *,
    include_incomplete: bool = False,
    prior: tuple[float, float] = (1.0, 1.0),
    variant: str = "team",
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    mc_decisions: int = 200,
    mc_sims: int = 20_000,
    say: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, pd.DataFrame], Loaded]:
    """The yardstick's tables (``decisions``, ``summary``, ``validation``) for every run under ``paths``."""
    loaded = load(paths, include_incomplete=include_incomplete)
    n_games = sum(len(r.games) for r in loaded.runs)
    say(f"scoring {n_games} games of {len(loaded.runs)} run(s) ...")
    step(f"scoring {n_games} games")
    decisions, states = decisions_table(loaded.runs, prior=prior, variant=variant)
    step(f"intervals of {len(decisions)} decisions ({n_resamples} resamples)")
    summary = summarise(decisions, n_resamples=n_resamples, seed=seed, level=level)
    step(f"Monte Carlo check of {min(mc_decisions, len(decisions))} decisions")
    validation = validate(decisions, states, n_decisions=mc_decisions, n_sims=mc_sims, seed=seed)
    return {"decisions": decisions, "summary": summary, "validation": validation}, loaded
