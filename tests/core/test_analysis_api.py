"""Every analysis subpackage exposes analyse(paths, **options) -> .tables (DataFrames: the rows of each CSV the
report writes) and .write(out_dir), computed directly (the command line calls the same functions)."""

from __future__ import annotations

import pandas as pd
import pytest

from trustsim import api


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name, overrides in {
        "er": ("mid2strike", ["agent=bayes", "runs=2", "progress=false"]),
        "ipd": ("ipd", ["game.rounds=10", "progress=false"]),
        "rel": ("reliance", ["agent=oracle", "game.limit=3", "progress=false"]),
    }.items():
        assert api.run(*overrides, run_dir=root / name).status == "complete"
    return root


@pytest.mark.parametrize(
    ("package", "options", "table"),
    [
        ("escape_room", {"anchor": "data", "resamples": 100}, "cells"),
        ("calibration", {}, "by_game"),
        ("arena", {}, "per_match"),
        ("reliance", {}, "main_metrics"),
        ("yardstick", {"mc_decisions": 0, "resamples": 100}, "summary"),
    ],
)
def test_analyse_returns_tables_and_writes_the_report(runs, tmp_path, package, options, table):
    import importlib

    module = importlib.import_module(f"analysis.{package}")
    result = module.analyse([runs], **options)
    assert isinstance(result.tables[table], pd.DataFrame) and len(result.tables[table]) > 0
    out = result.write(tmp_path / "report", figures=False)
    assert (out / "report.md").is_file()
    assert (out / f"{table}.csv").read_text(encoding="utf-8") == result.tables[table].to_csv(index=False)


def test_analyse_errors_name_the_problem(tmp_path):
    from analysis import escape_room
    from analysis.api import AnalysisError

    with pytest.raises(AnalysisError, match="no such directory"):
        escape_room.analyse([tmp_path / "missing"])


def test_an_unknown_option_is_named(runs):
    from analysis import arena
    from analysis.api import AnalysisError

    with pytest.raises(AnalysisError, match="unexpected keyword argument 'bins'"):
        arena.analyse([runs], bins=3)
