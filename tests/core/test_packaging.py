"""The wheel ships conf/ and its `trustsim` command runs from any directory (outside the checkout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_runs_a_preset_from_a_temporary_directory(tmp_path):
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("trustsim-*.whl")
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"trustsim/conf/config.yaml", "trustsim/conf/game/escape_room.yaml"} <= names
    assert "analysis/data/escape-room-v2.tar.gz" in names
    assert {"hydra_plugins/trustsim_sweeper/sweeper.py", "trustsim/conf/hydra/sweeper/trustsim.yaml"} <= names
    target = tmp_path / "site"
    installed = subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(target), CI="true")
    where = subprocess.run(
        [sys.executable, "-c", "import trustsim.config as c; print(c.conf_dir())"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip() == str(target / "trustsim" / "conf"), where.stderr  # not the checkout's conf/
    proc = subprocess.run(
        [str(target / "bin" / "trustsim"), "+experiment=mid2strike", "agent=bayes"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (manifest,) = (work / "outputs" / "runs").rglob("manifest.json")
    data = json.loads(manifest.read_text())
    assert data["status"] == "complete" and data["counts"]["games"] == 11
    # trustsim's sweeper (a Hydra plugin in the hydra_plugins namespace) is found outside the checkout too
    sweep = subprocess.run(
        [
            str(target / "bin" / "trustsim"),
            "-m",
            "+experiment=mid2strike",
            "agent=bayes",
            "hydra.sweep.dir=sweep",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    assert (work / "sweep" / "jobs.csv").is_file()


def test_every_data_folder_is_declared(tmp_path):
    """setuptools builds without a "Package would be ignored" block (a data folder missing from the packages),
    and the viewer's page code is in the build."""
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "-d", str(tmp_path / "build")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "would be ignored" not in built.stdout + built.stderr, (built.stdout + built.stderr)[-3000:]
    assert {p.name for p in (tmp_path / "build" / "analysis" / "view" / "assets").iterdir()} >= {
        "app.js",
        "style.css",
    }
