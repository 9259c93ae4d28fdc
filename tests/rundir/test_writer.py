"""The run recorder's writers: table rows (mappings or tuples) are written as the ``csv`` module writes them,
the escape room's rows quote the cells that need it, and the event log is redacted and flushed per block."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.escape_room.plan import UNIT as ESCAPE_ROOM_UNIT
from tests.rundir.strategies import cells
from trustsim.rundir import RunRecorder, TableWriter, format_cell
from trustsim.rundir import writer as writer_module


def csv_text(columns: list[str], rows: list[list[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[format_cell(v) for v in r] for r in rows])
    return out.getvalue()


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(cells, min_size=3, max_size=3), max_size=6), width=st.integers(1, 3))
def test_tuples_are_written_as_the_csv_module_writes_them(
    rows: list[list[object]], width: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    columns = ["a", "b", "c"][:width]
    rows = [r[:width] for r in rows]
    path = tmp_path_factory.mktemp("tuples") / "t.csv"
    out = TableWriter(path, columns)
    out.write_tuples([tuple(r) for r in rows])
    out.close()
    assert path.read_bytes().decode("utf-8") == csv_text(columns, rows)
    assert out.rows == len(rows)


def test_cells_that_need_it_are_quoted(tmp_path: Path) -> None:
    out = TableWriter(tmp_path / "t.csv", ["a", "b"])
    out.write_tuples([("a,b", 'say "hi"'), ("two\nlines", "cr\r"), ("plain", " sp "), ("", None)])
    out.write_rows([{"a": 1.0, "b": True}, {"b": -0.0}])
    out.close()
    text = 'a,b\n"a,b","say ""hi"""\n"two\nlines",cr\r\nplain, sp \n,\n1.0,true\n,-0.0\n'
    assert (tmp_path / "t.csv").read_bytes().decode("utf-8") == text


def test_a_one_column_table_quotes_a_lone_empty_cell(tmp_path: Path) -> None:
    out = TableWriter(tmp_path / "t.csv", ["a"])
    out.write_tuples([("",), ("x",), ("x,y",)])
    out.write_rows([{}, {"a": None}])
    out.close()
    assert (tmp_path / "t.csv").read_text() == 'a\n""\nx\n"x,y"\n""\n""\n'


def test_escape_room_rows_quote_cells_that_need_it(tmp_path: Path) -> None:
    """Run-wide cells and free-text cells (a password whose capsule names hold a comma, an agent with a quote)
    are quoted; confidences keep their type's text (1 vs 1.0, -0.0 vs 0.0); the rows read back to the right
    cells."""
    import asyncio
    import dataclasses

    from agents.escape_room.partner import ScriptedPartner
    from games.escape_room.job import TABLES
    from games.escape_room.model import EscapeRoomModel
    from games.escape_room.tables import TableBuilder
    from games.escape_room.types import Action, Decision
    from tests.escape_room.helpers import make_options, start_all
    from tests.escape_room.test_model import Scripted

    odd = {1: 1, 2: 1.0, 3: -0.0, 4: 0.0}
    first = {  # round 1 of each seat
        "A": Decision(Action.volunteer({1: "Q1-A", 2: "Q2-B,C", 3: "Q3-C", 4: "Q4-D"}), confidence=dict(odd)),
        "B": Decision(Action.pass_(), confidence={1: 1.0, 2: 1, 3: 0.0, 4: -0.0}),
        "C": Decision(Action.pass_(), confidence={1: 0.5, 2: 0.25, 3: 0.1 + 0.2, 4: 1.0}),
    }
    policies = {**{s: Scripted([d]) for s, d in first.items()}, "D": ScriptedPartner()}
    start_all(policies)
    options = dataclasses.replace(make_options("T"), capsule_names="lenient")
    rec = asyncio.run(
        EscapeRoomModel(seed=1, game=1, options=options, policies=policies, partner_puzzle=4).play()
    )
    cell = {
        "run_id": "r,1",
        "agent": 'my "agent"',
        "model": "m,1",
        "prompt": "p\nq",
        "memory": "none",
        "schedule": "t",
        "partner_slot": "fixed",
        "team": "A=llm:m,1;B=x",
    }
    models = {s: "m,1" for s in "ABCD"}
    t = TableBuilder(cell, 0, models, {s: 'my "agent"' for s in "ABCD"}, {"A"}, {"A": 'st"yle', "B": None})
    tables = t.rows(rec)
    for name, columns in TABLES.items():
        assert all(len(row) == len(columns) for row in tables[name])
        out = TableWriter(tmp_path / f"{name}.csv", columns)
        out.write_tuples(tables[name])
        out.close()
        with (tmp_path / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == len(tables[name]) > 0
        assert [tuple(r.values()) for r in rows] == tables[name]
        assert {r["run_id"] for r in rows} == {"r,1"}
        if name != "predictions":
            assert {r["model"] for r in rows} == {"m,1"}
    games = t.game_row(rec)
    assert (games["agent"], games["team"], games["prompt"]) == ('my "agent"', "A=llm:m,1;B=x", "p\nq")
    round_1 = {r["seat"]: r for r in t.decision_rows(rec) if r["round"] == "1"}
    assert (round_1["A"]["prompt"], round_1["B"]["prompt"]) == ('st"yle', "")  # a scripted seat's: none
    assert round_1["A"]["password"] == "Q1=Q1-A;Q2=Q2-B,C;Q3=Q3-C;Q4=Q4-D"
    assert [tuple(round_1[s][f"conf_Q{k}"] for k in range(1, 5)) for s in "ABC"] == [
        ("1", "1.0", "-0.0", "0.0"),
        ("1.0", "1", "0.0", "-0.0"),
        ("0.5", "0.25", "0.3", "1.0"),  # 0.1 + 0.2 rounded to 10 places
    ]
    predictions = t.prediction_rows(rec)
    assert {r["agent"] for r in predictions} == {'my "agent"'}
    assert [(r["subject"], r["p"]) for r in predictions[:3]] == [
        ("B", "1.0"),
        ("C", "-0.0"),
        ("D", "0.0"),
    ]  # A's


def test_a_flush_is_one_write_per_file_and_events_are_redacted_per_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret, other = "sk-test-abcdefghijklmnop", "hunter2-long-password"
    monkeypatch.setenv("TRUSTSIM_TEST_API_KEY", secret)
    monkeypatch.setenv("TRUSTSIM_TEST_PASSWORD", other)
    writes: list[str] = []
    write_all = writer_module._write_all

    def counting(fh, data: bytes) -> None:  # type: ignore[no-untyped-def]
        writes.append(Path(fh.name).name)
        write_all(fh, data)

    monkeypatch.setattr(writer_module, "_write_all", counting)
    rec = RunRecorder(tmp_path, ESCAPE_ROOM_UNIT.events)  # the job gives the recorder its game's unit
    table = rec.table("t", ["a", "b"])
    rec.event("game_start", session=0, game=1)
    for i in range(3):
        rec.event("decision", raw=f"my key is {secret}, {other}{other}", i=i)
        rec.event("verification", raw=secret[:-1], i=i)  # a prefix is not the secret
        table.write_tuples([(str(i), "x")])
    assert writes == [] or set(writes) == {"t.csv"}  # the header may be written with the first flush
    writes.clear()
    rec.event("game_start", session=0, game=2)  # the previous game is written out: one write per file
    assert sorted(writes) == ["events.jsonl", "t.csv"]
    text = (tmp_path / "events.jsonl").read_text()
    assert secret not in text and other not in text
    assert text.count("***redacted***") == 9 and text.count(secret[:-1]) == 3
    assert (tmp_path / "t.csv").read_text() == "a,b\n0,x\n1,x\n2,x\n"
    rec.close()


def test_a_secret_with_a_line_break_is_redacted_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redacting the joined block would match this secret across two lines; each line is redacted on its own
    instead, as before the block redaction (no line holds it)."""
    monkeypatch.setenv("TRUSTSIM_TEST_TOKEN", '"x":1}\n{"seq":1')
    rec = RunRecorder(tmp_path)
    rec.event("a", x=1)
    rec.event("b", y=2)
    rec.close()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert lines == ['{"seq":0,"type":"a","x":1}', '{"seq":1,"type":"b","y":2}']


def test_events_are_written_out_at_least_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between unit starts, buffered events (and table rows) reach the file once a second of events has passed."""
    now = [100.0]
    monkeypatch.setattr(writer_module, "_monotonic", lambda: now[0])
    rec = RunRecorder(tmp_path)
    table = rec.table("t", ["a", "b"])
    events = tmp_path / "events.jsonl"
    rec.event("decision", i=0)
    table.write_tuples([("0", "x")])
    now[0] += 0.5
    rec.event("decision", i=1)
    assert events.read_text() == ""  # half a second: still buffered
    now[0] += 0.5
    rec.event("decision", i=2)  # a second since the last write: everything goes out
    assert len(events.read_text().splitlines()) == 3
    assert (tmp_path / "t.csv").read_text() == "a,b\n0,x\n"
    rec.event("decision", i=3)
    assert len(events.read_text().splitlines()) == 3  # the clock starts again from the write
    rec.close()
    assert len(events.read_text().splitlines()) == 4
