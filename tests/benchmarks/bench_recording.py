"""Benchmark: the escape room's recording cost per game (issue 16): tables and event log, apart from the game.

Run: ``python tests/benchmarks/bench_recording.py [--runs 50] [--repeat 9]``.

Method: one scripted ``bayes`` job of ``runs`` 11-game mid2strike sessions is played once while its finished
games (GameRecord + the session's TableBuilder) and its events (the fields of each ``RunRecorder.event`` call)
are captured. They are then replayed, game by game, into fresh writers in a temporary folder:

- tables: ``TableBuilder.rows`` (build the four tables' rows), ``TableWriter.write_tuples`` (each row's CSV line),
  and the flush of the four files before the next game (one write each);
- events: the game's events into a ``RunRecorder`` (one JSON line each), with its flush at the next
  ``game_start``.

Each figure is the minimum over ``repeat`` replays of small chunks of games (10), summed: robust against other
jobs on a loaded machine (each chunk takes well under a scheduler slice). The load average is printed beside
them. In a whole job the same code runs slower per game (caches are shared with the game loop), so these are
lower bounds of the recording's share; ``bench_escape_room.py`` gives the whole job.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("CI", "true")  # no progress bar
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from games.escape_room.job import TABLES  # noqa: E402
from games.escape_room.tables import Row, TableBuilder  # noqa: E402
from tests.benchmarks.bench_escape_room import job_seconds  # noqa: E402
from trustsim.rundir.writer import RunRecorder, TableWriter  # noqa: E402


def per_game_us(fn: Callable[[Any], None], items: Sequence[Any], repeat: int, chunk: int = 10) -> float:
    """Microseconds per item of ``fn(item)``: the sum over chunks of the best of ``repeat`` timings."""
    total = 0.0
    for start in range(0, len(items), chunk):
        part = items[start : start + chunk]
        best = float("inf")
        for _ in range(repeat):
            began = time.perf_counter()
            for item in part:
                fn(item)
            best = min(best, time.perf_counter() - began)
        total += best
    return total / len(items) * 1e6


def capture(runs: int) -> tuple[list[tuple[TableBuilder, Any]], list[list[tuple[str, dict[str, Any]]]]]:
    """Play a bayes job; return its games (builder, record) and its events (type, fields) grouped per game."""
    games: list[tuple[TableBuilder, Any]] = []
    events: list[list[tuple[str, dict[str, Any]]]] = [[]]
    rows, event = TableBuilder.rows, RunRecorder.event

    def grab_rows(self: TableBuilder, rec: Any) -> dict[str, list[Row]]:
        games.append((self, rec))
        return rows(self, rec)

    def grab_event(self: RunRecorder, type: str, **fields: Any) -> None:
        if type == "game_start":
            events.append([])
        events[-1].append((type, fields))
        event(self, type, **fields)

    TableBuilder.rows, RunRecorder.event = grab_rows, grab_event  # type: ignore[method-assign]
    try:
        job_seconds(runs)
    finally:
        TableBuilder.rows, RunRecorder.event = rows, event  # type: ignore[method-assign]
    return games, [g for g in events if g and g[0][0] == "game_start"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="11-game sessions of the captured job")
    parser.add_argument("--repeat", type=int, default=9, help="replays per chunk of games (the best counts)")
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    games, events = capture(args.runs)
    built = [builder.rows(rec) for builder, rec in games]
    with tempfile.TemporaryDirectory() as tmp:
        build = per_game_us(lambda game: game[0].rows(game[1]), games, args.repeat)
        writers = {name: TableWriter(Path(tmp) / f"{name}.csv", columns) for name, columns in TABLES.items()}

        def write(tables: dict[str, list[Row]]) -> None:
            for name, rows in tables.items():
                writers[name].write_tuples(rows)
            for writer in writers.values():
                writer._pending.clear()  # nothing reaches the file: the write alone

        def write_flush(tables: dict[str, list[Row]]) -> None:
            for name, rows in tables.items():
                writers[name].write_tuples(rows)
            for writer in writers.values():
                writer.flush()

        written = per_game_us(write, built, args.repeat)
        flushed = per_game_us(write_flush, built, args.repeat)
        for writer in writers.values():
            writer.close()
        recorder = RunRecorder(Path(tmp) / "events")

        def replay(calls: list[tuple[str, dict[str, Any]]]) -> None:
            for type, fields in calls:
                recorder.event(type, **fields)

        appended = per_game_us(replay, events, args.repeat)
        recorder.close()
    n_events = sum(map(len, events)) / len(events)
    print(f"{len(games)} games, {n_events:.1f} events per game")
    print(
        f"tables: {build + flushed:6.1f} us/game = build (TableBuilder.rows) {build:.1f} + write_tuples "
        f"{written:.1f} + flush of the 4 files {flushed - written:.1f}"
    )
    print(f"events: {appended:6.1f} us/game (RunRecorder.event calls and the flush of events.jsonl)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
