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

from typing import Any

from analysis.yardstick.score import LABEL

__all__ = ["LABEL", "analyse"]


def analyse(paths: list[str] | str = (), **options: Any) -> Any:  # type: ignore[assignment]
    """Run the yardstick on run/sweep/reference-log directories: an :class:`analysis.api.AnalysisResult` with
    ``.tables`` (``decisions``, ``summary``, ``validation``) and ``.write(out_dir)``; options are the
    subcommand's flags (``reference=True``, ``variant="self_reliant"``, ``resamples=1000``, ...)."""
    from analysis.api import analyse_with

    return analyse_with("yardstick", list([paths] if isinstance(paths, str) else paths), **options)
