"""Calibration: model labels without provider prefixes, underpowered groups flagged, legends off the data,
and an empty input folder named in the error."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.calibration import figures
from analysis.calibration.load import model_label
from analysis.calibration.tables import MIN_SOLID_CLUSTERS
from tests.calibration.synthetic import escape_rows, write_run


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("anthropic:claude-opus-4-6", "claude-opus-4-6"),
        ("openai/gpt-5.1", "gpt-5.1"),
        ("gemini:gemini-3.1-pro-preview", "gemini-3.1-pro-preview"),
        ("hosted_vllm/meta/llama-3", "meta/llama-3"),
        ("trustsim/smollm2", "smollm2"),
        ("smollm2", "smollm2"),
        ("scripted", "scripted"),
        ("my-org/model:v2", "my-org/model:v2"),
    ],
)
def test_model_label_drops_only_provider_prefixes(raw: str, label: str) -> None:
    assert model_label(raw) == label


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    root = tmp_path / "runs"
    write_run(
        root, "ext", "escape_room", escape_rows("ext", rng, n_sessions=12, model="anthropic:claude-opus-4-6")
    )
    write_run(root, "few", "escape_room", escape_rows("few", rng, n_sessions=2, model="openai/gpt-5.1"))
    return root


@pytest.mark.slow
def test_summary_labels_and_underpowered_note(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["calibration", str(runs), "--out", str(out), "--resamples", "100"]) == 0
    s = pd.read_csv(out / "summary.csv", keep_default_na=False).set_index("model")
    assert set(s.index) == {"claude-opus-4-6", "gpt-5.1"}
    assert (
        s.loc["claude-opus-4-6", "clusters"] == 12 and "underpowered" not in s.loc["claude-opus-4-6", "note"]
    )
    assert s.loc["gpt-5.1", "note"].startswith(f"underpowered: 2 clusters (< {MIN_SOLID_CLUSTERS})")
    assert "gpt-5.1: underpowered: 2 clusters" in (out / "report.md").read_text()
    assert not any("anthropic" in p.name for p in out.iterdir())


def test_legends_sit_below_the_axes(runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis.calibration.load import load_predictions
    from analysis.calibration.tables import Settings, measure_table, reliability_table

    df, _ = load_predictions([runs])
    kept: list[plt.Figure] = []
    close = plt.close
    monkeypatch.setattr(figures.plt, "close", kept.append)
    figures.reliability_diagram(reliability_table(df, Settings()), tmp_path)
    summary = measure_table(df, ["source", "game_type", "model"], Settings(n_resamples=50))
    figures.expected_vs_met(summary, tmp_path)
    assert len(kept) == 2
    for fig in kept:
        renderer = fig.canvas.get_renderer()
        (ax,) = fig.axes
        box = ax.get_legend().get_window_extent(renderer)
        lowest = min(ax.get_window_extent(renderer).y0, ax.xaxis.get_tightbbox(renderer).y0)
        assert box.y1 <= lowest + 1, "legend overlaps the axes or their labels"
        close(fig)


def test_empty_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for sub in ("calibration", "arena", "reliance", "trust"):
        assert main([sub, str(empty), "--out", str(tmp_path / f"o_{sub}")]) != 0
        err = capsys.readouterr().err
        assert str(empty) in err, (sub, err)
