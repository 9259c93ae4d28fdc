"""Drills: inputs that gave a wrong result without a word now give a warning with the count, or are refused.

- ``decisions.csv`` with ``game=abc`` in some rows: the rows are dropped with a warning naming the file, the
  count and the value (before: dropped silently).
- ``games.csv`` missing rows that the finished run recorded: a warning with how many are missing.
- ``from-inspect`` with two samples of one id, a manifest that is not JSON or not an object, a ``..`` file name,
  or a file that is not text: each such sample is skipped with its reason, the others written; none
  overwrites another or stops the command with a traceback.
"""

from __future__ import annotations

import csv
import json
import shutil
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

import analysis.inspect_logs.convert as convert
from analysis.inspect_logs import RUN_FILES_KEY
from tests.conftest import run_in_process
from trustsim.rundir import DataWarning, Run, read_manifest, read_table

BAYES = ["+experiment=mid2strike", "agent=bayes", "progress=false"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("silent") / "run"
    assert run_in_process(BAYES, path) == 0
    return path


def _rewrite(path: Path, change) -> int:  # type: ignore[no-untyped-def]
    rows = list(csv.reader(path.open(newline="")))
    rows, n = change(rows)
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return n


def _read(run: Path, name: str) -> tuple[int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read_table(Run(run, read_manifest(run)), name, cell_keys=False)
    return len(df), [str(w.message) for w in caught if issubclass(w.category, DataWarning)]


def test_rows_with_a_non_numeric_game_are_dropped_with_a_count(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"

    shutil.copytree(run_dir, run)
    total, said = _read(run, "decisions.csv")
    assert said == []

    def game_abc(rows: list[list[str]]) -> tuple[list[list[str]], int]:
        col, n = rows[0].index("game"), 0
        for row in rows[1:]:
            if row[col] == "3":
                row[col], n = "abc", n + 1
        return rows, n

    changed = _rewrite(run / "decisions.csv", game_abc)
    assert changed > 0
    kept, said = _read(run, "decisions.csv")
    assert kept == total - changed
    assert said == [
        f"{run / 'decisions.csv'}: {changed} row(s) whose session / game is not a whole number ('abc'); "
        f"dropped them, using {kept} row(s)"
    ]


def test_missing_game_rows_are_counted(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"

    shutil.copytree(run_dir, run)
    recorded = read_manifest(run)["tables"]["games"]
    _rewrite(run / "games.csv", lambda rows: (rows[:-3], 3))
    kept, said = _read(run, "games.csv")
    assert kept == recorded - 3
    assert said == [
        f"{run / 'games.csv'}: {kept} row(s), but the run recorded {recorded}: 3 row(s) are missing (deleted "
        "or lost); the analysis uses the rows there are"
    ]


def _sample(sid: str, files: object, epoch: int = 1) -> SimpleNamespace:
    return SimpleNamespace(id=sid, epoch=epoch, store={RUN_FILES_KEY: files})


def test_from_inspect_skips_bad_and_duplicate_samples(run_dir: Path, tmp_path: Path, monkeypatch) -> None:
    good = {name: (run_dir / name).read_text() for name in ("manifest.json", "events.jsonl", "games.csv")}
    samples = [
        _sample("s1", good),
        _sample("s1", {**good, "games.csv": "other\n"}),  # the same id again
        _sample("bad-json", {**good, "manifest.json": "{not json"}),
        _sample("list", {**good, "manifest.json": "[1, 2]"}),
        _sample("dotdot", {**good, "..": "x"}),
        _sample("bytes", {**good, "games.csv": 42}),
    ]
    log = SimpleNamespace(samples=samples, status="success",
                          eval=SimpleNamespace(task="t", eval_id="e", model="m"))  # fmt: skip
    monkeypatch.setattr(
        convert, "_inspect_log_api", lambda: SimpleNamespace(read_eval_log=lambda *a, **k: log)
    )
    (tmp_path / "a.eval").write_text("")
    out = tmp_path / "out"
    result = convert.write_run_dirs([tmp_path / "a.eval"], out)
    assert result.run_dirs == [out / "a" / "s1"]
    assert (out / "a" / "s1" / "games.csv").read_text() == good[
        "games.csv"
    ]  # the first kept, not overwritten
    reasons = dict(result.skipped)
    log_path = tmp_path / "a.eval"
    assert "same id" in reasons[f"{log_path}: sample s1"]
    assert "manifest.json is not JSON" in reasons[f"{log_path}: sample bad-json"]
    assert "is a JSON list, not an object" in reasons[f"{log_path}: sample list"]
    assert "is not a plain name" in reasons[f"{log_path}: sample dotdot"]
    assert "holds int, not text" in reasons[f"{log_path}: sample bytes"]
    assert sorted(p.name for p in (out / "a").iterdir()) == ["s1"]  # nothing of a refused sample written
    json.loads((out / "a" / "s1" / "manifest.json").read_text())
