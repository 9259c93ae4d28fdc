"""Trust figures: offline agents are named, the D-wrong shading is explained, legends never cover data."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from analysis.trust import figures
from analysis.trust.pipeline import analyse
from tests.analysis.synth import write_run


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("runs")
    for i in range(3):
        write_run(root / f"anchor{i}", model="scripted", schedule="anchor", memory="none", n_games=5, seed=i)
        write_run(root / f"smooth{i}", model="scripted", schedule="smooth", n_games=6, seed=10 + i)
        write_run(root / f"strike{i}", model="scripted", schedule="1strike", n_games=6, seed=20 + i)
        write_run(root / f"mid{i}", model="scripted", schedule="mid2strike", n_games=6, seed=30 + i)
    return analyse([root], n_resamples=50)


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch, result, tmp_path: Path) -> dict[str, plt.Figure]:
    """Draw every figure; keep each Figure (``plt.close`` is intercepted) by its file name."""
    kept: list[plt.Figure] = []
    close = plt.close
    monkeypatch.setattr(figures.plt, "close", kept.append)
    made = figures.all_figures(
        result.cells, result.deltas, result.curves, result.by_round, result.km, tmp_path
    )
    names = [name for name, _ in made if name]
    assert len(names) == len(kept) == 5, made
    yield dict(zip(names, kept, strict=True))
    for fig in list(kept):
        close(fig)


def test_offline_agents_are_named_not_called_scripted():
    df = pd.DataFrame({"model": ["scripted", "gpt-5.1"], "agent": ["bayes", "llm"]})
    assert figures._with_who(df)["who"].tolist() == ["scripted:bayes", "gpt-5.1 (llm)"]
    one = pd.DataFrame({"model": ["scripted"], "agent": ["bayes"]})
    assert figures._with_who(one)["who"].tolist() == ["scripted:bayes"]


def test_panel_titles_name_the_agent(drawn):
    titles = [ax.get_title() for ax in drawn["fig_per_game_bars"].axes]
    assert titles and all(t.startswith("scripted:synth") for t in titles)


def test_per_game_bars_explain_the_shading(drawn):
    labels = [t.get_text() for t in drawn["fig_per_game_bars"].legends[0].get_texts()]
    assert "D wrong (shaded game)" in labels and "partner's puzzle" in labels
    recovery = [t.get_text() for t in drawn["fig_recovery"].legends[0].get_texts()]
    assert "D wrong (shaded game)" in recovery


@pytest.mark.parametrize(
    "name",
    ["fig_verification_by_round", "fig_per_game_bars", "fig_two_axis", "fig_recovery", "fig_survival"],
)
def test_legend_sits_outside_every_panel(drawn, name):
    fig = drawn[name]
    renderer = fig.canvas.get_renderer()
    assert all(ax.get_legend() is None for ax in fig.axes), "legend drawn inside a panel"
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        if ax.get_visible():
            assert not box.overlaps(ax.get_window_extent(renderer)), (
                f"{name}: legend overlaps {ax.get_title()}"
            )
