"""Trust figures: offline agents are named, the D-wrong shading is explained, legends never cover data."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from analysis.escape_room import figures
from analysis.escape_room.pipeline import analyse
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


@pytest.mark.slow
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


def _bar_tops(ax: plt.Axes) -> list[float]:
    return [p.get_y() + p.get_height() for p in ax.patches if hasattr(p, "get_height")]


def test_the_tallest_bar_is_below_the_frame(drawn):
    for ax in drawn["fig_verification_by_round"].axes:
        if ax.get_visible() and ax.patches:
            assert max(_bar_tops(ax)) < ax.get_ylim()[1] * 0.95, ax.get_title()


def test_game_axes_start_at_game_1_in_every_panel(drawn):
    for name in ("fig_per_game_bars", "fig_recovery"):
        for ax in drawn[name].axes:
            if ax.get_visible() and ax.axison:
                ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
                assert ax.get_xlim()[0] == 0.5 and ticks[0] == 1, (name, ax.get_title(), ticks)


def test_no_panel_holds_more_than_three_survival_bands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "runs"
    schedules = ["smooth", "1strike", "2strike", "3strike", "mid2strike", "recur"]
    for i, schedule in enumerate(schedules):
        for k in range(3):
            write_run(root / f"{schedule}{k}", schedule=schedule, n_games=4, seed=10 * i + k)
    result = analyse([root], n_resamples=30)
    kept: list[plt.Figure] = []
    monkeypatch.setattr(figures.plt, "close", kept.append)
    _, caption = figures.survival(result.km, tmp_path)
    (fig,) = kept
    curves = [len(ax.get_lines()) for ax in fig.axes if ax.get_visible()]
    assert sum(curves) == len(schedules) and max(curves) <= figures.MAX_BANDS
    assert "with 95% cluster-bootstrap bands" in caption and "several panels" in caption
    plt.close(fig)


def test_captions_promise_only_the_bands_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    one = write_run(tmp_path / "one", schedule="mid2strike", n_games=6)  # one session: no interval anywhere
    result = analyse([one], n_resamples=30)
    monkeypatch.setattr(figures.plt, "close", lambda fig: None)
    _, recovery = figures.recovery(result.curves, tmp_path)
    _, survival = figures.survival(result.km, tmp_path)
    for caption in (recovery, survival):
        assert "with 95%" not in caption and "no interval bands" in caption, caption
    fig = plt.gcf()
    assert not any(c.__class__.__name__ == "PolyCollection" for ax in fig.axes for c in ax.collections)
    plt.close("all")
