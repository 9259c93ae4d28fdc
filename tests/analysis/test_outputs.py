"""Every subcommand writes each table as CSV and Markdown and each figure as PNG and PDF (docs/running.md, Analysis);
the arena's match grid keeps runs apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.__main__ import main
from tests.conftest import run_in_process

RUNS = {
    "trust": ["+experiment=mid2strike", "agent=bayes", "runs=3", "game.games=4"],
    "reliance": ["+experiment=reliance", "agent=random", "game.limit=12"],
    "calibration": ["+experiment=ipd", "runs=3", "game.opponent=random", "game.rounds=10"],
    "arena": ["+experiment=ipd", "runs=3", "game.opponent=random", "game.rounds=10"],
    "trust_game": ["+experiment=trust_game", "game.pairs=20"],
}
ARGS = {"trust": ["--resamples", "20"], "reliance": ["--resamples", "20"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    made: dict[tuple[str, ...], Path] = {}
    for command, overrides in RUNS.items():
        if tuple(overrides) not in made:
            assert run_in_process([*overrides, "progress=false"], root / command) == 0
            made[tuple(overrides)] = root / command
    return {command: made[tuple(overrides)] for command, overrides in RUNS.items()}


@pytest.mark.slow
@pytest.mark.parametrize("command", list(RUNS))
def test_tables_as_csv_and_markdown_figures_as_png_and_pdf(command: str, runs, tmp_path: Path) -> None:
    out = tmp_path / command
    assert (
        main([command, str(runs[command]), "--out", str(out), *ARGS.get(command, ["--resamples", "10"])]) == 0
    )
    names = {p.name for p in out.iterdir()}
    csvs = {n for n in names if n.endswith(".csv")}
    pngs = {n for n in names if n.endswith(".png")}
    assert csvs and pngs, names
    assert {n.removesuffix(".csv") + ".md" for n in csvs} <= names
    assert {n.removesuffix(".png") + ".pdf" for n in pngs} <= names
    assert all((out / n).read_bytes().startswith(b"%PDF") for n in names if n.endswith(".pdf"))


def test_the_match_grid_gives_each_run_its_own_panel(runs, tmp_path: Path, monkeypatch) -> None:
    import shutil

    import matplotlib.pyplot as plt

    both = tmp_path / "both"
    shutil.copytree(runs["arena"], both / "a")
    assert run_in_process([*RUNS["arena"], "seed=5", "progress=false"], both / "b") == 0
    kept: list = []
    close = plt.close
    monkeypatch.setattr(plt, "close", kept.append)
    assert (
        main(["arena", str(both), "--out", str(tmp_path / "out"), "--resamples", "10", "--grid-matches", "4"])
        == 0
    )
    (fig,) = [f for f in kept if "Joint moves" in (f._suptitle.get_text() if f._suptitle else "")]
    panels = [ax for ax in fig.axes if ax.get_title(loc="left").startswith("run ")]
    assert len(panels) == 2 and len({ax.get_title(loc="left") for ax in panels}) == 2
    for ax in panels:  # 4 rows in all: 2 per run, each labelled with its match, readable
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert len(labels) == 2 and all(" vs " in label for label in labels)
        assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 7
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.count(": 2 of 3") == 2
    for f in kept:
        close(f)
