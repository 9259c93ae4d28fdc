"""Drills: errors that came late, wrong or not at all, now refused at start with one line naming the key or file.

- A full output folder before start: the message names the folder (not ``'?'``), no lock file is left;
  ``analysis --out`` on a full disk: exit 3 naming the file, not an internal error.
- Runs that never end: ``runs=10**12``, a plan row of ``1e12`` runs and a sweep of more than 10**6 jobs are
  refused; a large sweep says how far composing its jobs got; an empty sweep (``range(-3)``) is an error.
- ``model.params.temperature=hot`` is refused at start; a binary plan file is "not a CSV file"; a plan row that
  clashes with the command line is named by its label, never by its values.
- A manifest whose ``config`` is a string is damage (the run is left out with a warning, the good run beside
  it analysed); ``--out /`` is refused.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hydra_plugins.trustsim_launcher.launcher as launcher
from tests.conftest import REPO, compose_config, run_in_process
from trustsim.config import MAX_AUTO_NAME, short_name

from .helpers import TRACEBACK, cli_env, run_batch

BAYES = ["+experiment=mid2strike", "agent=bayes", "game.games=1", "progress=false"]
HOT = [
    "agent=llm",
    "model=openai_compatible",
    "model.api_base=http://127.0.0.1:9/v1",
    "model.params.temperature=hot",
]
FSIZE = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, it does not kill
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.argv = [sys.argv[2], *sys.argv[3:]]
runpy.run_module(sys.argv[0], run_name="__main__")
"""


def limited(module: str, args: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` whose files may not grow past ``limit`` bytes (a full disk, per file)."""
    return subprocess.run(
        [sys.executable, "-c", FSIZE, str(limit), module, *args],
        cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_a_full_output_folder_is_named_and_left_clean(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = limited("trustsim", [*BAYES, f"hydra.run.dir={run_dir}"], tmp_path, 0)
    assert done.returncode == 2, done.stderr
    assert f"cannot write the output directory '{run_dir}'" in done.stderr and "'?'" not in done.stderr
    assert TRACEBACK not in done.stderr
    assert not (run_dir / ".trustsim.lock").exists()


@pytest.mark.slow
def test_analysis_on_a_full_disk_names_the_file(tmp_path: Path) -> None:
    assert run_in_process(BAYES, tmp_path / "runs" / "one") == 0
    out = tmp_path / "site"
    done = limited("analysis", ["view", str(tmp_path / "runs"), "--out", str(out)], REPO, 2048)
    assert done.returncode == 3, done.stderr
    assert "analysis view: error: cannot write " in done.stderr and str(out) in done.stderr
    assert "internal error" not in done.stderr and TRACEBACK not in done.stderr


@pytest.mark.slow
def test_bad_values_are_refused_at_start(tmp_path: Path) -> None:
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "big.csv").write_text('overrides,runs,label\n"+experiment=smooth agent=bayes",1e12,big\n')
    (tmp_path / "clash.csv").write_text(
        'overrides,runs,label\n"+experiment=smooth agent=bayes +model.params.note=s3cr3t-row-value",2,row-one\n'
    )
    cases = [
        {"args": [*BAYES, "runs=1000000000000"]},
        {"args": ["-m", "+plan=big.csv"]},
        {"args": ["-m", "+plan=binary.csv"]},
        {"args": ["-m", *BAYES, "seed=range(-3)"]},
        {"args": ["-m", "+plan=clash.csv", "agent=bayes"]},
        {"args": [*BAYES[:1], *HOT]},
        {"args": ["-m", *BAYES, "seed=range(1000001)"]},
    ]
    results = run_batch(cases, tmp_path)
    for case, res in zip(cases, results, strict=True):
        assert res["code"] == 2, (case, res)
        assert TRACEBACK not in res["stderr"], res["stderr"]
    says = [
        "config error at 'runs': must be <= 1000000",
        "line 2, column runs: 1e12 is more than 1,000,000",
        "+plan=binary.csv: not a CSV file (not UTF-8 text)",
        "the sweep has no jobs: seed=range(-3) expands to no value",
        "agent is set by the plan (its row row-one) and by the command line",
        "config error at 'model.params.temperature': must be a number, got str 'hot'",
        "the sweep has 1,000,001 jobs, more than 1,000,000; nothing was run",
    ]
    for res, said in zip(results, says, strict=True):
        assert said in res["stderr"], res["stderr"]
    assert "s3cr3t-row-value" not in results[4]["stderr"]


def test_a_large_sweep_says_how_far_composing_got(capsys, monkeypatch) -> None:
    monkeypatch.setattr(launcher, "SHOW_EVERY_S", 0.0)
    assert launcher._shown(iter(range(launcher.SHOW_FROM)), launcher.SHOW_FROM) == list(
        range(launcher.SHOW_FROM)
    )
    err = capsys.readouterr().err
    assert f"composing the configs of {launcher.SHOW_FROM:,} jobs" in err
    assert f"composed {launcher.SHOW_FROM:,} of {launcher.SHOW_FROM:,} jobs" in err
    assert launcher._shown(iter(range(3)), 3) == [0, 1, 2] and capsys.readouterr().err == ""


@pytest.mark.slow
def test_a_damaged_manifest_beside_a_good_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert run_in_process(BAYES, runs / "good") == 0
    shutil.copytree(runs / "good", runs / "bad")
    manifest = json.loads((runs / "bad" / "manifest.json").read_text())
    manifest["config"] = "not an object"
    (runs / "bad" / "manifest.json").write_text(json.dumps(manifest))
    for args in (["trust", str(runs), "--no-figures", "--resamples", "50"], ["view", str(runs)]):
        out = tmp_path / f"out-{args[0]}"
        done = subprocess.run([sys.executable, "-m", "analysis", *args, "--out", str(out)], cwd=REPO,
                              env=cli_env(), capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "'config' must be a JSON object, got str" in done.stderr and TRACEBACK not in done.stderr
    summary = subprocess.run([sys.executable, "-m", "trustsim.summary", str(runs / "bad")], cwd=REPO,
                             env=cli_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert summary.returncode == 2 and "'config' must be a JSON object" in summary.stderr
    assert TRACEBACK not in summary.stderr
    root = subprocess.run([sys.executable, "-m", "analysis", "view", str(runs), "--out", "/"], cwd=REPO,
                          env=cli_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert root.returncode == 2 and "--out /: the filesystem root" in root.stderr


def test_a_long_automatic_name_is_cut_with_a_hash() -> None:
    pattern = ("TTF" * 100)[:250]
    cfg = compose_config(["agent=bayes", "schedule=custom", f"schedule.pattern={pattern}", "game.games=250"])
    name = cfg["name"]
    assert (
        len(name) == MAX_AUTO_NAME
        and name.startswith("custom-TTFTTF")
        and short_name("custom-" + "T" * 99) != short_name("custom-" + "T" * 98 + "F")
    )
    assert short_name("custom-TTFFT") == "custom-TTFFT"
