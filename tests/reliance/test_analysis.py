"""`python -m analysis reliance`: metrics from run directories, checked against direct computation."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main as analysis_main
from tests.conftest import run_in_process

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("reliance_runs")
    jobs = {
        "oracle": ["+experiment=reliance", "game.limit=60"],
        "random": ["+experiment=reliance", "agent=random", "game.limit=60"],
        "pairs_random": ["+experiment=reliance_pairs", "agent=random"],
        "support_random": ["+experiment=reliance_support", "agent=random"],
        "random_full_support_base": ["+experiment=reliance", "agent=random", "game.set=support", "name=base"],
    }
    for name, over in jobs.items():
        assert run_in_process([*over, "progress=false"], root / name) == 0
    return root


def test_report_end_to_end(runs, tmp_path):
    out = tmp_path / "report"
    assert analysis_main(["reliance", str(runs), "--out", str(out), "--resamples", "2000"]) == 0
    main = pd.read_csv(out / "main_metrics.csv").set_index("system")
    assert main.loc["oracle", "macro_accuracy"] == 1.0
    assert main.loc["oracle", "macro_accuracy_low"] == 1.0
    assert main.loc["oracle", "normalised_regret"] == 0.0
    # random: recompute blueprint-macro accuracy and all-stage success from the raw tables
    stages = pd.read_csv(runs / "random" / "stages.csv")  # support-set runs are not main-benchmark runs
    per_bp = stages.groupby("blueprint")["optimal"].mean()
    assert main.loc["random", "macro_accuracy"] == pytest.approx(per_bp.mean())
    assert (
        main.loc["random", "macro_accuracy_low"]
        < main.loc["random", "macro_accuracy"]
        < main.loc["random", "macro_accuracy_high"]
    )
    scen = pd.read_csv(runs / "random" / "scenarios.csv")
    assert main.loc["random", "all_stage_success"] == pytest.approx(scen["all_optimal"].mean())
    pairs = pd.read_csv(out / "pairs.csv").set_index("metric")
    assert 0 <= pairs.loc["pair_accuracy", "share"] <= pairs.loc["relation_agreement", "share"] + 1
    support = pd.read_csv(out / "support_comparison.csv").set_index("system")
    assert support.loc["random", "matched"] > 0
    diag = pd.read_csv(out / "diagnostics.csv")
    oracle_diag = diag[diag["system"] == "oracle"]
    assert (oracle_diag["k"] == 0).all()
    for name in ("report.md", "accuracy.png", "accuracy_by_process.png", "accuracy_by_stage.csv"):
        assert (out / name).exists()


def test_no_reliance_runs_is_a_clean_error(tmp_path, capsys):
    assert analysis_main(["reliance", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert "no complete reliance run" in capsys.readouterr().err


def test_analysis_reads_files_only():
    for path in (REPO / "analysis" / "reliance").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] in ("games", "agents", "trustsim") for n in names), path
