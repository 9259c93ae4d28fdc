"""The analysis of the shared reference logs reproduces the study's published cells.

The logs are read from ``$TRUSTSIM_SHARED/data/escape-room-v2`` if that variable is set, else from
``<repo>/../shared/data/escape-room-v2``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.trust.loader import load_trust_data
from analysis.trust.measures import compute_cells

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("TRUSTSIM_SHARED", REPO.parent / "shared"))
LOGS = SHARED / "data" / "escape-room-v2"

pytestmark = pytest.mark.skipif(
    not (LOGS / "runs").is_dir(),
    reason=f"shared reference logs not found at {LOGS} (set TRUSTSIM_SHARED to the shared folder)",
)

# (model, schedule) -> (verifications/game, partner share) over D-correct games, as published.
PUBLISHED = {
    ("gpt-5.1", "smooth"): ("0.42", "0.143"),
    ("gpt-5.1", "1strike"): ("1.18", "0.475"),
    ("gemini-3.1-pro-preview", "smooth"): ("0.63", "0.000"),
    ("gemini-3.1-pro-preview", "1strike"): ("2.76", "0.275"),
}


@pytest.fixture(scope="module")
def cells() -> dict[tuple[str, str, str], object]:
    data = load_trust_data([LOGS / "runs", LOGS / "examples-74f0fd1"])
    assert data.n_games == 1765 + 21
    return {
        (c.keys["model"], c.keys["schedule"], c.keys["memory"]): c
        for c in compute_cells(data, n_resamples=200)
    }


@pytest.mark.parametrize(("key", "expected"), sorted(PUBLISHED.items()))
def test_published_cells_reproduce(cells: dict, key: tuple[str, str], expected: tuple[str, str]) -> None:
    cell = cells[(*key, "transcript")]
    volume, share = expected
    assert f"{cell.measures['volume'].estimate:.2f}" == volume
    assert f"{cell.measures['partner_share'].estimate:.3f}" == share


def test_dataset_shape(cells: dict) -> None:
    assert cells[("gpt-5.1", "smooth", "transcript")].n_games_dcorrect == 50
    assert cells[("gpt-5.1", "1strike", "transcript")].n_games_dcorrect == 100
    anchor = cells[("claude-opus-4-6", "anchor", "none")]
    assert anchor.cluster_unit == "game" and anchor.n_clusters == 10
