"""The reference study's logs ship with trustsim (analysis/data/escape-room-v2.tar.gz) and reproduce the
published cells from the archive alone, without the shared folder."""

from __future__ import annotations

import fnmatch
import tarfile
import tomllib
from pathlib import Path

import pytest

from analysis.__main__ import main
from analysis.escape_room.loader import load_trust_data
from analysis.escape_room.measures import compute_cells
from analysis.reference_data import ARCHIVE, DATASET, MARKER, ReferenceDataError, extract_reference

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_reference(tmp_path_factory.mktemp("ref"))


def test_archive_keeps_the_licence_and_attribution():
    assert ARCHIVE.stat().st_size < 3_000_000
    with tarfile.open(ARCHIVE) as tar:
        names = tar.getnames()
        licence = tar.extractfile(f"{DATASET}/LICENSE").read().decode()  # type: ignore[union-attr]
        readme = tar.extractfile(f"{DATASET}/README.md").read().decode()  # type: ignore[union-attr]
    assert all(n == DATASET or n.startswith(DATASET + "/") for n in names)
    assert "MIT License" in licence and "Yujiao Chen" in licence
    assert "Escape-room-v2" in readme


def test_archive_is_package_data():
    """pyproject ships the archive with the ``analysis.data`` package (a wheel and a plain install)."""
    conf = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = conf["package-data"].get("analysis.data", []) + conf["package-data"].get("*", [])
    assert any(fnmatch.fnmatch(ARCHIVE.name, p) for p in patterns)
    assert (ARCHIVE.parent / "__init__.py").is_file()
    # setup.py lists the packages (find_packages over trustsim*, agents*, games*, analysis*; tests/core/
    # test_packaging.py checks the built wheel holds the archive)
    assert '"analysis*"' in (REPO / "setup.py").read_text()


def test_shipped_logs_reproduce_the_published_cells(unpacked: Path):
    data = load_trust_data([unpacked])
    assert data.n_games == 1765 + 21
    cells = {(c.keys["model"], c.keys["schedule"]): c for c in compute_cells(data, n_resamples=50)}
    for (model, schedule), (volume, share) in {
        ("gpt-5.1", "smooth"): ("0.42", "0.143"),
        ("gpt-5.1", "1strike"): ("1.18", "0.475"),
        ("gemini-3.1-pro-preview", "smooth"): ("0.63", "0.000"),
        ("gemini-3.1-pro-preview", "1strike"): ("2.76", "0.275"),
    }.items():
        cell = cells[(model, schedule)]
        assert f"{cell.measures['volume'].estimate:.2f}" == volume
        assert f"{cell.measures['partner_share'].estimate:.3f}" == share


def test_extract_reuses_its_copy_and_refuses_foreign_content(unpacked: Path, tmp_path: Path, capsys):
    assert extract_reference(unpacked.parent) == unpacked
    assert (unpacked / MARKER).is_file()
    (tmp_path / DATASET).mkdir()
    with pytest.raises(ReferenceDataError, match="exists and is not an unpacked copy"):
        extract_reference(tmp_path)
    assert main(["extract-reference", str(tmp_path / "new")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "new" / DATASET)
    assert main(["extract-reference", str(tmp_path)]) == 1
    assert "exists and is not an unpacked copy" in capsys.readouterr().err


@pytest.mark.slow
def test_trust_reference_option(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("TRUSTSIM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "report"
    code = main(["trust", "--reference", "--out", str(out), "--no-figures", "--resamples", "50", "--quiet"])
    assert code == 0
    sweep = (out / "schedule_sweep.csv").read_text()
    assert "gpt-5.1" in sweep and "gemini-3.1-pro-preview" in sweep
    assert main(["trust", "--out", str(out)]) == 2
    assert "--reference" in capsys.readouterr().err
