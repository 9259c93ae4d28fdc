"""report.md says whether the Murphy identity is exact or binned (with the residual) and when the
cross-fitted recalibration had to fall back from whole-cluster folds to row folds."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.calibration import scores
from tests.calibration.synthetic import escape_rows, write_run


def _murphy_row(text: str, model: str) -> list[str]:
    line = next(
        ln
        for ln in text.splitlines()
        if ln.startswith(f"| native | escape_room | {model} |") and "distinct p" in ln
    )
    return [c.strip() for c in line.strip("|").split("|")]


@pytest.mark.slow
def test_exact_and_binned_murphy_rows_and_row_fold_fallback(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    root = tmp_path / "runs"
    coarse = escape_rows("coarse", rng, n_sessions=4, model="coarse")  # p rounded to 0.01: <= 101 distinct
    fine = escape_rows("fine", rng, n_sessions=1, model="fine")  # one cluster, many distinct p
    for r in fine:
        if r["p"] is not None:
            r["p"] = float(rng.uniform(0.3, 1.0))
    write_run(root, "coarse", "escape_room", coarse)
    write_run(root, "fine", "escape_room", fine)
    out = tmp_path / "rep"
    assert main(["calibration", str(root), "--out", str(out), "--resamples", "100"]) == 0
    text = (out / "report.md").read_text()
    assert "holds exactly when the forecasts are grouped by their distinct values" in text

    row = _murphy_row(text, "coarse")
    assert row[6].startswith("exact") and abs(float(row[7])) < 1e-12
    row = _murphy_row(text, "fine")
    assert row[6].startswith("binned (10)")
    p = pd.DataFrame(fine).dropna(subset=["p"])
    m = scores.murphy(p["p"], p["outcome"], n_bins=10)
    assert float(row[7]) == pytest.approx(m.brier - (m.reliability - m.resolution + m.uncertainty), abs=5e-3)
    assert abs(float(row[7])) > 0

    notes = text.split("## Notes", 1)[1]
    assert re.search(
        r"fine: recalibration cross-fitted over 5 folds of rows, not of whole clusters: there is only 1 cluster",
        notes,
    )
    assert "coarse: recalibration" in notes and "4 folds of whole clusters (4 clusters < 5)" in notes
