"""The one game contract for units of play, and the core's ignorance of games.

Every registered game declares its unit of play (``GameSpec.unit``: a :class:`trustsim.contract.PlayUnit`)
and the run directory, the recorder and ``python -m trustsim.status`` take it from there; no module of the
core (``trustsim/``) names a game outside docstrings.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import string
from pathlib import Path
from types import SimpleNamespace

import pytest

from trustsim import api, status
from trustsim.contract import PlayUnit, ReasoningSource, games
from trustsim.rundir import EventUnit, Run, iter_events, read_manifest, scan_events

REPO = Path(__file__).resolve().parents[2]
GAMES = sorted(games())

#: Core modules that still name a game, with the strings that do so (each is reported in the project notes).
#: None does: the trust-card battery reads its parts from ``conf/``, and error messages take their examples
#: from the registered games. Any occurrence fails the test.
KNOWN_NAMES: dict[str, set[str]] = {}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Each game's example job, played once for the module."""
    root = tmp_path_factory.mktemp("units")
    out = {}
    for name in GAMES:
        result = api.run(None, [*games()[name].example, "progress=false"], root / name)
        assert result.status == "complete", (name, result.exit_code, result.failure)
        out[name] = result.run_dir
    return out


@pytest.mark.parametrize("game", GAMES)
def test_every_game_declares_its_unit_of_play(game):
    spec = games()[game]
    unit = spec.unit
    assert isinstance(unit, PlayUnit), (
        f"GameSpec {game!r} declares no unit=PlayUnit(...) (games/{game}/plan.py)"
    )
    events = unit.events
    assert isinstance(events, EventUnit)
    assert events.start and events.end and events.start != events.end
    assert events.key and events.label and unit.counted
    assert set(_fields(events.event_key)) <= set(events.key), "event_key may use only the key fields"
    for table, template in events.table_keys.items():
        assert table == "*" or table in spec.tables, f"{game}: table_keys names unknown table {table!r}"
        assert _fields(template), f"{game}: table key template {template!r} names no column"
    assert unit.per_run is None or callable(unit.per_run)
    assert unit.per_end is None or callable(unit.per_end)
    # the manifest records the unit (the reader's damage rule and status need no game registry)
    assert EventUnit.from_manifest({"unit": json.loads(json.dumps(events.to_dict()))}) == events


@pytest.mark.parametrize("game", GAMES)
def test_the_unit_of_play_matches_what_the_game_writes(game, runs):
    """The example job brackets every unit with its start/end events, each table row names a unit the events
    hold, and status counts done = planned = the manifest's count."""
    spec, run_dir = games()[game], runs[game]
    unit = spec.unit
    manifest = read_manifest(run_dir)
    assert EventUnit.from_manifest(manifest) == unit.events == Run(run_dir, manifest).unit
    counted = manifest["counts"][unit.counted]
    assert counted > 0
    events = list(iter_events(run_dir))
    starts = [e for e in events if e["type"] == unit.events.start]
    ends = [e for e in events if e["type"] == unit.events.end]
    assert starts and len(starts) == len(ends), f"{game}: {len(starts)} start vs {len(ends)} end events"
    keys = {unit.events.event_key.format(**{k: e[k] for k in unit.events.key}) for e in starts}
    assert keys == {unit.events.event_key.format(**{k: e[k] for k in unit.events.key}) for e in ends}
    assert manifest["unit"]["counted"] == unit.counted
    per_end = manifest["unit"]["per_end"]
    assert len(ends) * per_end == counted, f"{game}: end events x per_end != counts[{unit.counted!r}]"
    checked = 0
    for table in spec.tables:
        template = unit.events.table_key(table)
        if template is None:
            continue
        with (run_dir / f"{table}.csv").open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        row_keys = {template.format(**row) for row in rows}
        assert row_keys <= keys, f"{game}: rows of {table}.csv name units the events lack: {row_keys - keys}"
        checked += bool(rows)
    assert checked or not unit.events.table_keys, f"{game}: no table row was checked against the events"
    planned = manifest["unit"]["planned"]
    assert planned == counted, f"{game}: the plan recorded at start != what the job played"
    job = status.job_status(run_dir)
    assert (job.unit, job.done, job.planned) == (unit.counted, counted, counted)
    # while running (the same directory read as a job in progress), done counts the end events
    running = dict(manifest, status="running")
    (run_dir / "manifest.json").write_text(json.dumps(running), encoding="utf-8")
    try:
        job = status.job_status(run_dir)
        assert (job.done, job.planned) == (counted, planned)
    finally:
        (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_game_without_a_unit_is_shown_without_units(tmp_path):
    (tmp_path / "manifest.json").write_text(
        json.dumps({"run_id": "x", "game": "not_a_game", "status": "complete", "runs": 2, "counts": {}}),
        encoding="utf-8",
    )
    job = status.job_status(tmp_path)
    assert (job.unit, job.done, job.planned) == ("", 0, None)


@pytest.mark.slow
def test_the_core_names_no_game():
    """No module of ``trustsim/`` names a registered game outside docstrings (strings, identifiers, imports),
    except the reported ones in KNOWN_NAMES."""
    pattern = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, GAMES)) + r")(?![A-Za-z0-9])")
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "trustsim").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for text, line in _code_texts(ast.parse(path.read_text(encoding="utf-8"))):
            if pattern.search(text):
                found.setdefault(rel, set()).add(text)
                assert text in KNOWN_NAMES.get(rel, set()), f"{rel}:{line} names a game: {text[:80]!r}"
    assert found == KNOWN_NAMES, "a known exception is gone: drop it from KNOWN_NAMES"


def concept_words() -> set[str]:
    """Words of the shipped games' own concepts the core must not name: every game's config groups
    (``GameSpec.groups``: memory, schedule), the escape room's schedule names, call purposes and prompt styles,
    the trust game's roles."""
    from games.escape_room.options import PROMPT_STYLES
    from games.escape_room.schedules import SCHEDULES

    groups = {group for spec in games().values() for group in spec.groups}
    purposes = {"solve", "own_answer", "reflection", "subtask"}
    return groups | set(SCHEDULES) | purposes | (set(PROMPT_STYLES) - {"trustsim"}) | {"trustor", "trustee"}


def test_the_core_names_no_game_concept():
    """No module of ``trustsim/`` names a game's own concept outside docstrings: the games bring them through
    their GameSpec (groups, cell columns, purposes in the model config's ``purpose_params``, stand-in answers,
    summary lines), the trust card's parts live in ``conf/card/``."""
    words = concept_words()
    assert {"memory", "schedule", "mid2strike", "own_answer", "reflection"} <= words
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, sorted(words))) + r")(?![A-Za-z0-9_])"
    )
    found = []
    for path in sorted((REPO / "trustsim").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for text, line in _code_texts(ast.parse(path.read_text(encoding="utf-8"))):
            if pattern.search(text):
                found.append(f"{rel}:{line}: {text[:80]!r}")
    assert not found, "the core names a game's concept: " + "; ".join(found)


def test_the_scan_sees_game_names():
    """The scan above is not blind: a string, a name and an import naming a game are found; docstrings are not."""
    game = GAMES[0]
    source = f'"""{game} docstring"""\nimport games.{game}\nx = "{game}"\n{game}_run = 1\n'
    texts = {text for text, _ in _code_texts(ast.parse(source))}
    assert {f"games.{game}", game, f"{game}_run"} <= texts
    assert f"{game} docstring" not in texts


def _code_texts(tree: ast.AST):
    """(text, line) of every string constant (docstrings and bare string statements left out), name,
    attribute, definition, argument and imported module of a module."""
    bare = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare:
            yield node.value, line
        elif isinstance(node, ast.Name):
            yield node.id, line
        elif isinstance(node, ast.Attribute):
            yield node.attr, line
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, line
        elif isinstance(node, ast.arg):
            yield node.arg, line
        elif isinstance(node, ast.alias):
            yield node.name, line
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, line


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


@pytest.fixture
def probe_game():
    """A throwaway game registered with a unit of play (removed again afterwards)."""
    from dataclasses import dataclass

    from trustsim import contract

    @dataclass(frozen=True)
    class ProbeOptions:
        heats: int = 3

    unit = PlayUnit(
        EventUnit("heat_start", "heat_end", ("heat",), "heat", "h{heat}", {"*": "h{heat}"}),
        counted="heats",
        per_run=lambda valid: valid.options.heats,
    )

    def texts(folder: Path):
        from trustsim.extract.items import ReasoningItem

        yield ReasoningItem(f"text of {folder.name}", "that it happens", 1, {"game_type": "unit_probe"})

    spec = contract.register_game(
        contract.GameSpec(
            name="unit_probe", options=ProbeOptions, tables={}, run=lambda ctx: None, unit=unit,
            reasoning={"probe_texts": ReasoningSource(texts)},
        )
    )  # fmt: skip
    yield spec
    with contract._LOCK:
        contract._GAMES.pop("unit_probe", None)
        contract._AGENTS.pop("unit_probe", None)


def test_a_new_game_brings_its_unit_without_touching_the_core(probe_game, tmp_path, monkeypatch):
    """Registering a GameSpec is enough: the recorder (given the game's unit by the job) writes out before its
    start event, the reader knows its unit from the manifest, and status counts it."""
    from trustsim.rundir import RunRecorder, writer

    monkeypatch.setattr(writer, "FLUSH_EVERY_S", 1e9)  # only unit starts write out (not the clock)

    rec = RunRecorder(tmp_path, probe_game.unit.events)
    rec.event("heat_start", heat=0)
    rec.event("heat_end", heat=0)
    assert (tmp_path / "events.jsonl").read_text() == ""  # buffered
    rec.event("heat_start", heat=1)  # a unit starts: the previous one reaches the disk
    assert [json.loads(line)["type"] for line in (tmp_path / "events.jsonl").read_text().splitlines()] == [
        "heat_start",
        "heat_end",
    ]
    rec.close()
    valid = SimpleNamespace(root=SimpleNamespace(runs=2), options=probe_game.options())  # the job's plan
    manifest = {
        "run_id": "p",
        "game": "unit_probe",
        "unit": probe_game.unit.record(valid),
        "status": "running",
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    job = status.job_status(tmp_path)  # no lock file: shown stale, counted from the events
    assert (job.status, job.unit, job.done, job.planned) == ("stale", "heats", 1, 6)
    scan = scan_events(tmp_path, full=True)
    assert scan.unit == probe_game.unit.events and scan.ok


def test_reasoning_sources_come_from_the_games():
    """``python -m trustsim.extract --kind`` offers exactly the sources the games declare (``GameSpec.reasoning``),
    each kind once, at most one of them the default."""
    from trustsim.extract.sources import default_kind, reasoning_sources

    declared = [(kind, spec.name, src) for spec in games().values() for kind, src in spec.reasoning.items()]
    known = reasoning_sources()
    assert len(known) == len(declared), "two games declare the same --kind"
    assert {k: (g, s) for k, g, s in declared} == known
    assert all(callable(src.read) and (src.find is None or callable(src.find)) for _, _, src in declared)
    defaults = [kind for kind, _, src in declared if src.default]
    assert len(defaults) <= 1 and default_kind() == (defaults[0] if defaults else None)
    assert list(known)[: len(defaults)] == defaults  # the default's game leads the choices


def test_a_new_game_brings_its_reasoning_source(probe_game, tmp_path):
    from trustsim.extract.__main__ import collect
    from trustsim.extract.sources import SourceError

    with pytest.raises(SourceError, match="no probe_texts run directory"):
        collect("probe_texts", [tmp_path], None)
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "manifest.json").write_text("{}", encoding="utf-8")
    items, game = collect("probe_texts", [tmp_path], None)
    assert game == "unit_probe" and [i.text for i in items] == ["text of r1"]
