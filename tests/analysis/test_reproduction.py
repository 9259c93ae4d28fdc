"""The analysis of the shared reference logs reproduces the study's published cells.

The logs are read from ``$TRUSTSIM_SHARED/data/escape-room-v2`` if that variable is set, else from
``<repo>/../shared/data/escape-room-v2``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from analysis.escape_room.loader import load_trust_data
from analysis.escape_room.measures import compute_cells

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


# D-correctness pattern of a run's games -> schedule name (specs/escape_room.md, "Schedules").
_PATTERNS = {
    "TTTTTTT": "smooth",
    "TTTTTTTTTT": "smooth",
    "FTTTTTTTTTT": "1strike",
    "FFTTTTTTTTT": "2strike",
    "FFFTTTTTTTT": "3strike",
    "TTTFFTTTTTT": "mid2strike",
    "FTTTFTTTTTT": "recur",
}


def _raw_cells() -> dict[tuple[str, str], tuple[int, int, int]]:
    """(model, schedule) -> (D-correct games, A/B/C "Verify:" decisions, of which at Q4), straight from the
    raw JSON logs, without the importer: every "Verify: Qk" decision counts, own puzzle included, as the
    study counted it."""
    cells: dict[tuple[str, str], list[int]] = {}
    for settings_path in sorted((LOGS / "runs").glob("*/experiment_settings.json")):
        settings = json.loads(settings_path.read_text())
        model = re.split(r"[:/]", settings["player_models"][0], maxsplit=1)[1]
        correct = settings["dummy_config"]["D"]["correctness_list"]
        files = sorted(settings_path.parent.glob("game_*.json"))
        flags = [i < len(correct) and bool(correct[i]) for i in range(len(files))]
        schedule = _PATTERNS["".join("T" if f else "F" for f in flags)]
        counts = cells.setdefault((model, schedule), [0, 0, 0])
        for path, d_correct in zip(files, flags, strict=True):
            if not d_correct:
                continue
            counts[0] += 1
            for rnd in json.loads(path.read_text())["rounds"]:
                for seat, text in rnd["decisions"].items():
                    m = re.match(r"\s*Verify:\s*Q(\d+)", text)
                    if seat != "D" and m:
                        counts[1] += 1
                        counts[2] += m.group(1) == "4"
    return {k: (g, v, p) for k, (g, v, p) in cells.items()}


def test_all_twenty_cells_reproduce_the_raw_logs() -> None:
    data = load_trust_data([LOGS / "runs"])  # the study's 170 runs (the examples folder adds a later run)
    cells = {
        (c.keys["model"], c.keys["schedule"], c.keys["memory"]): c
        for c in compute_cells(data, n_resamples=10)
    }
    raw = _raw_cells()
    assert len(raw) == 20
    for (model, schedule), (games, verifs, partner) in sorted(raw.items()):
        cell = cells[(model, schedule, "transcript")]
        assert cell.n_games_dcorrect == games, (model, schedule)
        assert cell.measures["volume"].estimate == pytest.approx(verifs / games, abs=1e-12), (model, schedule)
        assert cell.measures["partner_share"].estimate == pytest.approx(partner / verifs, abs=1e-12), (
            model,
            schedule,
        )
    mini = cells[("gpt-5.4-mini-2026-03-17", "1strike", "transcript")]
    assert raw[("gpt-5.4-mini-2026-03-17", "1strike")] == (100, 232, 46)
    assert f"{mini.measures['volume'].estimate:.2f}" == "2.32"
    assert f"{mini.measures['partner_share'].estimate:.3f}" == "0.198"
