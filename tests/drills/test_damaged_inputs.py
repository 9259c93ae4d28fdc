"""Drill battery: damaged analysis inputs (issue 11 item 7).

One rule for every subcommand (trust, calibration, arena, reliance, and post-hoc ``trustsim.extract``): a
warning names the damaged file (and line) and says what was used; the exit code is non-zero only when nothing
usable is left, and then the message gives the reason. Never a traceback.

Each case copies a real engine run, damages one file, runs the subcommand in-process and checks the exit
code, that the damaged file is named, and that no traceback was printed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from analysis.__main__ import main as analysis_main
from tests.conftest import run_in_process
from trustsim.extract.__main__ import main as extract_main

RUNS = {
    "esc": ["+experiment=mid2strike", "agent=bayes", "runs=3", "progress=false"],
    "rel": ["+experiment=reliance", "runs=3", "game.limit=12", "agent=random", "progress=false"],
    "ipd": ["+experiment=ipd", "runs=3", "game.opponent=random", "game.noise=0.05", "progress=false"],
}
LLM_REPLY = json.dumps({"reasoning": "they seem nice", "move": "C", "p_opponent_cooperates": None})


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One clean run per game (and an arena run with LLM reasoning for the extraction), made once."""
    root = tmp_path_factory.mktemp("base")
    out = {}
    for name, over in RUNS.items():
        assert run_in_process(over, root / name) == 0, name
        out[name] = root / name
    store = root / "store.sqlite"
    llm = [
        "+experiment=ipd",
        "agent=llm",
        "game.rounds=3",
        "runs=2",
        "model=scripted",
        "model.name=mock",
        "+model.litellm_model=openai/mock-model",
        f"+model.params.mock_response='{LLM_REPLY}'",
        f"llm.store_path={store}",
        "progress=false",
    ]
    assert run_in_process(llm, root / "llm") == 0
    out["llm"] = root / "llm"
    model = {
        "name": "mock-extractor",
        "litellm_model": "openai/mock-extractor",
        "structured_output": "schema",
        "params": {"mock_response": json.dumps({"probability": 0.75})},
    }
    (root / "extractor.yaml").write_text(yaml.safe_dump(model))
    out["extractor"] = root / "extractor.yaml"
    out["store"] = store
    return out


# -- damage ------------------------------------------------------------------------------------------------
def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def cut_last_line(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    data = path.read_bytes().rstrip(b"\n")
    path.write_bytes(data[: data.rfind(b"\n") + 1 + 12])
    return path


def garbage_middle(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    lines = _lines(path)
    lines.insert(len(lines) // 2, b"this is not json at all\n")
    path.write_bytes(b"".join(lines))
    return path


def delete(run: Path, name: str = "events.jsonl") -> Path:
    (run / name).unlink()
    return run / name


def empty(run: Path, name: str = "events.jsonl") -> Path:
    (run / name).write_bytes(b"")
    return run / name


def damage_first_line(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    lines = _lines(path)
    lines[0] = b'{"seq":0,"type":"run_st\n'
    path.write_bytes(b"".join(lines))
    return path


def every_line_garbage(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    path.write_bytes(b"".join(b"#" + line for line in _lines(path)))
    return path


def interleaved(run: Path, name: str = "events.jsonl") -> Path:
    """A second writer's lines in the middle (seq restarts): what two jobs in one directory used to do."""
    path = run / name
    lines = _lines(path)
    mid = len(lines) // 2
    path.write_bytes(b"".join([*lines[:mid], *lines[:5], *lines[mid:]]))
    return path


def binary_junk(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    lines = _lines(path)
    lines.insert(len(lines) // 3, b"\x00\xff\xfe\x00garbage\x00\n")
    path.write_bytes(b"".join(lines))
    return path


def cut_in_half(run: Path, name: str = "events.jsonl") -> Path:
    path = run / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def make_directory(run: Path, name: str = "events.jsonl") -> Path:
    (run / name).unlink()
    (run / name).mkdir()
    return run / name


def header_only(run: Path, name: str) -> Path:
    path = run / name
    path.write_bytes(_lines(path)[0])
    return path


def extra_fields_row(run: Path, name: str) -> Path:
    path = run / name
    lines = _lines(path)
    lines.insert(len(lines) // 2, b"a,b,c" + b",x" * 60 + b"\n")
    path.write_bytes(b"".join(lines))
    return path


def not_utf8(run: Path, name: str) -> Path:
    path = run / name
    lines = _lines(path)
    lines.insert(2, b"\xff\xfe\xfa," * 3 + b"\n")
    path.write_bytes(b"".join(lines))
    return path


def drop_column(run: Path, name: str, column: str) -> Path:
    import pandas as pd

    path = run / name
    pd.read_csv(path).drop(columns=[column]).to_csv(path, index=False)
    return path


def truncated_manifest(run: Path) -> Path:
    path = run / "manifest.json"
    path.write_bytes(path.read_bytes()[:40])
    return path


def manifest_list(run: Path) -> Path:
    (run / "manifest.json").write_text("[1, 2, 3]")
    return run / "manifest.json"


def manifest_running(run: Path) -> Path:
    data = json.loads((run / "manifest.json").read_text())
    data["status"] = "running"
    (run / "manifest.json").write_text(json.dumps(data))
    return run / "manifest.json"


def manifest_binary(run: Path) -> Path:
    (run / "manifest.json").write_bytes(b"\x00\xff" * 50)
    return run / "manifest.json"


# -- cases -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    command: str  # trust | calibration | arena | reliance | extract
    run: str  # which base run
    damage: Callable[[Path], Path]
    usable: bool  # something usable is left: exit 0 with a warning
    second_clean_run: bool = False  # add an undamaged copy of another game next to it
    shown: str | None = None  # text that must appear instead of the file path (e.g. an option name)


def _c(id: str, command: str, run: str, damage: Callable[[Path], Path], usable: bool, **kw: object) -> Case:
    return Case(id, command, run, damage, usable, **kw)  # type: ignore[arg-type]


EVENT_DAMAGE = [
    ("cut_last_line", cut_last_line, True),
    ("garbage_middle", garbage_middle, True),
    ("deleted_events", delete, True),
    ("empty_events", empty, True),
    ("damage_before_first_game", damage_first_line, True),
    ("every_line_garbage", every_line_garbage, False),
    ("interleaved_writer", interleaved, True),
    ("binary_junk", binary_junk, True),
    ("cut_in_half", cut_in_half, True),
    ("events_is_a_directory", make_directory, True),
]
CASES: list[Case] = []
for cmd, run in (("trust", "esc"), ("arena", "ipd"), ("reliance", "rel"), ("calibration", "esc")):
    for name, fn, usable in EVENT_DAMAGE:
        if cmd in ("arena", "reliance", "calibration") and name in (
            "binary_junk",
            "cut_in_half",
            "events_is_a_directory",
            "empty_events",
        ):
            continue  # covered once (trust); the same reader serves every subcommand
        CASES.append(_c(f"{cmd}-{name}", cmd, run, fn, usable))
CASES += [
    # tables
    _c("trust-games_cut_mid_row", "trust", "esc", lambda r: cut_last_line(r, "games.csv"), True),
    _c("trust-games_deleted", "trust", "esc", lambda r: delete(r, "games.csv"), False),
    _c("trust-games_empty", "trust", "esc", lambda r: empty(r, "games.csv"), False),
    _c("trust-games_header_only", "trust", "esc", lambda r: header_only(r, "games.csv"), False),
    _c("trust-decisions_extra_fields", "trust", "esc", lambda r: extra_fields_row(r, "decisions.csv"), False),
    _c("trust-decisions_not_utf8", "trust", "esc", lambda r: not_utf8(r, "decisions.csv"), False),
    _c(
        "trust-agent_games_missing_column",
        "trust",
        "esc",
        lambda r: drop_column(r, "agent_games.csv", "survived"),
        False,
    ),
    _c("arena-moves_cut_mid_row", "arena", "ipd", lambda r: cut_last_line(r, "moves.csv"), True),
    _c("arena-moves_extra_fields", "arena", "ipd", lambda r: extra_fields_row(r, "moves.csv"), False),
    _c("arena-moves_deleted", "arena", "ipd", lambda r: delete(r, "moves.csv"), False, shown="moves.csv"),
    _c("reliance-stages_extra_fields", "reliance", "rel", lambda r: extra_fields_row(r, "stages.csv"), False),
    _c("reliance-stages_cut_mid_row", "reliance", "rel", lambda r: cut_last_line(r, "stages.csv"), True),
    _c(
        "calibration-predictions_not_utf8",
        "calibration",
        "esc",
        lambda r: not_utf8(r, "predictions.csv"),
        False,
    ),
    _c(
        "calibration-predictions_cut",
        "calibration",
        "ipd",
        lambda r: cut_last_line(r, "predictions.csv"),
        True,
    ),
    _c(
        "calibration-predictions_extra_fields_next_to_a_clean_run",
        "calibration",
        "esc",
        lambda r: extra_fields_row(r, "predictions.csv"),
        True,
        second_clean_run=True,
    ),
    # manifests
    _c("trust-manifest_truncated", "trust", "esc", truncated_manifest, False),
    _c("trust-manifest_is_a_list", "trust", "esc", manifest_list, False),
    _c("trust-manifest_deleted", "trust", "esc", lambda r: delete(r, "manifest.json"), False),
    _c("trust-manifest_running", "trust", "esc", manifest_running, False, shown="--include-incomplete"),
    _c("arena-manifest_binary", "arena", "ipd", manifest_binary, False),
    _c("reliance-manifest_truncated", "reliance", "rel", truncated_manifest, False),
    _c(
        "calibration-manifest_truncated_next_to_a_clean_run",
        "calibration",
        "esc",
        truncated_manifest,
        True,
        second_clean_run=True,
    ),
    # post-hoc extraction (arena LLM run with reasoning texts)
    _c("extract-cut_last_line", "extract", "llm", cut_last_line, True),
    _c("extract-garbage_middle", "extract", "llm", garbage_middle, True),
    _c("extract-deleted_events", "extract", "llm", delete, False),
    _c("extract-every_line_garbage", "extract", "llm", every_line_garbage, False),
    _c("extract-manifest_truncated", "extract", "llm", truncated_manifest, False),
    _c("extract-events_is_a_directory", "extract", "llm", make_directory, False),
]


def test_battery_is_large_enough() -> None:
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)


def _argv(case: Case, src: Path, out: Path, base: dict[str, Path]) -> list[str]:
    if case.command == "trust":
        return ["trust", str(src), "--out", str(out), "--resamples", "30", "--no-figures"]
    if case.command == "calibration":
        return ["calibration", str(src), "--out", str(out), "--resamples", "10"]
    if case.command == "arena":
        return ["arena", str(src), "--out", str(out), "--resamples", "10"]
    if case.command == "reliance":
        return ["reliance", str(src), "--out", str(out), "--resamples", "20", "--no-figures"]
    return [str(src), "--kind", "arena", "--out", str(out), "--model-file", str(base["extractor"]),
            "--store", str(base["store"].with_name("extract.sqlite"))]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_damaged_input(
    case: Case, base: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = tmp_path / "in"
    run = src / "run"
    shutil.copytree(base[case.run], run)
    if case.second_clean_run:
        shutil.copytree(base["ipd"], src / "other")
    damaged = case.damage(run)
    out = tmp_path / "out"
    argv = _argv(case, src, out, base)
    code = extract_main(argv) if case.command == "extract" else analysis_main(argv)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text and "internal error" not in text, text
    if case.usable:
        assert code == 0, text
        assert "warning:" in text, text
    else:
        assert code != 0, text
        assert text.strip().splitlines()[-1].strip(), text  # the last line gives the reason
    named = case.shown or str(damaged)
    if case.shown is None and case.id.endswith("manifest_deleted"):
        named = str(src)  # no manifest: the folder is named, with what was looked for
        assert "manifest.json" in text
    assert named in text, text
