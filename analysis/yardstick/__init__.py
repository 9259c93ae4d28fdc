"""The normative yardstick for escape-room verification: a model-based yardstick, not the exact optimum of the
game.

For every decision of a seat under test it computes, under an explicit reference model (``model.py``, version
``v2``: the exact posterior of each partner's reliability from the session's public evidence, ``beliefs.py``
and ``evidence.py``; teammates playing a stated policy, the variant; the game's elimination rule for every
action; the coin a verification costs; the seat's best response afterwards), the expected score of each legal
action given only what that seat could observe, the regret of the action taken (best minus chosen, in
expected coins) and whether a verification was protective (its expected value beats every action without a
verification) or ritual. ``montecarlo.py`` re-estimates the expected values by simulation.

Command line: ``python -m analysis yardstick DIR... --out OUT [--reference]`` (``docs/yardstick.md``).
Python::

    from analysis import yardstick
    result = yardstick.analyse(["outputs/runs"], reference=True)
    result.tables["summary"]      # one row per source x model x agent x schedule x memory x team
    result.tables["decisions"]    # one row per decision: EV per action, regret, protective
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from analysis.yardstick.score import LABEL

if TYPE_CHECKING:
    from analysis.api import AnalysisResult

__all__ = ["LABEL", "analyse"]


def analyse(paths: Iterable[str] | str = (), **options: Any) -> AnalysisResult:
    """Run the yardstick on run/sweep/reference-log directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (``decisions``, ``summary``, ``validation``) and ``.write(out_dir)``; options are the
    subcommand's flags (``reference=True``, ``variant="self_reliant"``, ``resamples=1000``, ...; the fields of
    :class:`analysis.yardstick.pipeline.YardstickOptions`)."""
    from analysis.api import Report, analyse_with
    from analysis.yardstick.pipeline import YardstickOptions, compute
    from analysis.yardstick.report import write_report

    def report(dirs: list[str], opts: YardstickOptions) -> Report:
        tables = compute(dirs, opts).tables
        return Report(tables, lambda out, _: write_report(tables, out, opts.variant, opts.prior, opts.level))

    return analyse_with("yardstick", paths, YardstickOptions, report, **options)
