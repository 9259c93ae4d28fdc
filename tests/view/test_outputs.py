"""``python -m analysis view outputs/``: the outputs folder as a whole (single runs, sweeps and the analysis
reports under it), each run listed with its start date and run id."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import cli

from .conftest import read_data, view


def _trustsim(cwd: Path, *args: str) -> None:
    proc = cli("trustsim", *args, "progress=false", cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def outputs(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder after a single run, a two-job sweep and an analysis report written under outputs/."""
    cwd = tmp_path_factory.mktemp("view_outputs")
    _trustsim(cwd, "+experiment=1strike", "agent=bayes", "game.games=3")
    _trustsim(cwd, "-m", "+experiment=1strike,2strike", "agent=bayes", "game.games=2")
    shutil.copytree(corpus / "report_arena", cwd / "outputs" / "analysis" / "arena")
    return cwd / "outputs"


@pytest.mark.slow  # a single run and a sweep through the CLI
def test_view_outputs_lists_runs_sweeps_and_reports(outputs: Path, tmp_path: Path) -> None:
    proc = view(str(outputs), "--out", str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stderr
    index = read_data(tmp_path / "site", "index.js")
    rows = index["runs"]
    assert len(rows) == 3
    single = [r for r in rows if "/runs/" in r["path"]]
    swept = [r for r in rows if "/sweeps/" in r["path"]]
    assert len(single) == 1 and single[0]["sweep"] is None
    (sweep_dir,) = {Path(r["path"]).parent for r in swept}
    assert len(swept) == 2 and {r["sweep"] for r in swept} == {sweep_dir.relative_to(outputs).as_posix()}
    for row in rows:
        manifest = json.loads((Path(row["path"]) / "manifest.json").read_text())
        assert row["run_id"] == manifest["run_id"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row["date"])
        assert manifest["timings"]["started"].replace("T", " ").startswith(row["date"])
    (report,) = index["reports"]
    assert report["path"].endswith("analysis/arena") and report["figures"]


def test_reference_runs_are_dated_by_their_folder(site: Path) -> None:
    rows = [r for r in read_data(site, "index.js")["runs"] if r["source"] == "reference"]
    assert {r["date"] for r in rows} == {"2026-05-20 01:21", "2026-05-20 20:07"}
    assert all(r["run_id"] == "ref:" + Path(r["path"]).name for r in rows)
