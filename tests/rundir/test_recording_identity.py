"""The recording fast paths change no byte: the synchronous game loop writes what the async one writes, the
tables equal those of the code before the fast paths (``recording_digests.json``), the buffered CSV writer
quotes exactly as the ``csv`` module does, and a killed job keeps every finished game on disk."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rundir.recording_digests import JOBS, load_golden, table_digest
from tests.rundir.strategies import cells
from trustsim import api
from trustsim.rundir import TableWriter, format_cell
from trustsim.rundir.writer import cell_text

REPO = Path(__file__).resolve().parents[2]
GOLDEN = load_golden()


def run_dir_bytes(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.suffix in (".csv", ".jsonl")}


def run(overrides: list[str], run_dir: Path) -> Path:
    result = api.run(None, [*overrides, "progress=false"], run_dir)
    assert result.status == "complete", (result.exit_code, result.failure)
    return run_dir


@pytest.mark.parametrize("job", sorted(JOBS))
def test_tables_equal_those_of_the_code_before_the_fast_paths(job: str, tmp_path: Path) -> None:
    run_dir = run(JOBS[job], tmp_path / job)
    for table, (columns, digest) in GOLDEN[job].items():
        assert table_digest(run_dir / f"{table}.csv", list(columns)) == digest, f"{job}: {table}.csv changed"


def _force_async(monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    """Mark the scripted players asynchronous: the game then takes its async path (``await`` per decision,
    ``asyncio.gather`` per round) with the very same decisions."""
    if game == "escape_room":
        from games.escape_room.policy import EscapeRoomPolicy

        monkeypatch.setattr(EscapeRoomPolicy, "is_async", True)
    elif game == "arena":
        from games.arena.policy import ArenaPlayer

        monkeypatch.setattr(ArenaPlayer, "is_async", True)
    else:
        from agents.trust_game.base import TrustPlayer

        monkeypatch.setattr(TrustPlayer, "is_async", True)


@pytest.mark.parametrize(
    ("game", "overrides", "same_events"),
    [
        # one session: events are byte-identical too (sessions of the async path interleave their events)
        ("escape_room", ["+experiment=mid2strike", "agent=bayes", "runs=1"], True),
        (
            "escape_room",
            ["+experiment=3strike", "agent=random", "runs=3", "game.reveal_after_game=true"],
            False,
        ),
        # the async arena starts every match before the first ends: its events interleave
        ("arena", ["+experiment=ipd_tournament", "game.rounds=15", "game.noise=0.1"], False),
        ("trust_game", ["+experiment=trust_game_repeated", "agent=tg_random", "runs=2"], True),
    ],
)
def test_fast_path_and_async_path_write_the_same_run_directory(
    game: str, overrides: list[str], same_events: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = run_dir_bytes(run(overrides, tmp_path / "fast"))
    with monkeypatch.context() as patch:
        _force_async(patch, game)
        slow = run_dir_bytes(run(overrides, tmp_path / "async"))
    if not same_events:  # the same events, in another order (seq follows the order)
        fast_events, slow_events = (
            sorted(json.dumps({**json.loads(line), "seq": 0}) for line in e.pop("events.jsonl").splitlines())
            for e in (fast, slow)
        )
        assert fast_events == slow_events
    assert fast == slow


def test_the_escape_room_model_takes_the_fast_path_only_without_llm_seats() -> None:
    from agents.escape_room.bayes import BayesAgent
    from games.escape_room.model import EscapeRoomModel
    from games.escape_room.partner import ScriptedPartner
    from tests.escape_room.helpers import make_options, start_all

    def model(**rules: object) -> EscapeRoomModel:
        import dataclasses

        options = dataclasses.replace(make_options("T"), **rules)
        policies = {**{s: BayesAgent() for s in "ABC"}, "D": ScriptedPartner()}
        start_all(policies)
        return EscapeRoomModel(seed=1, game=1, options=options, policies=policies, partner_puzzle=4)

    assert model().synchronous and model().play_sync().state.over
    assert not model(verifier="llm").synchronous  # a verification asks the seat (async) for its answer
    with pytest.raises(RuntimeError, match="asynchronous"):
        model(own_answer="llm").play_sync()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(cells, min_size=3, max_size=3), max_size=6), st.booleans(), st.booleans())
def test_table_writer_writes_what_the_csv_module_writes(
    rows: list[list[object]], as_text: bool, single: bool
) -> None:
    import tempfile

    columns = ["a"] if single else ["a", "b", "c"]
    rows = [r[: len(columns)] for r in rows]
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[format_cell(v) for v in r] for r in rows])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        out = TableWriter(path, columns)
        if as_text:  # rows built as cell text take the writer's fast path
            out.write_rows([{c: cell_text(v) for c, v in zip(columns, r, strict=True)} for r in rows])
        else:
            out.write_rows([dict(zip(columns, r, strict=True)) for r in rows])
        out.close()
        assert path.read_bytes().decode("utf-8") == expected.getvalue()


_KILL_AT_GAME_3 = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from agents.escape_room.bayes import BayesAgent

decide = BayesAgent.decide
def dying(self, obs):
    if obs.game == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return decide(self, obs)
BayesAgent.decide = dying
from trustsim import api
api.run(None, ["+experiment=mid2strike", "agent=bayes", "progress=false"], Path({run_dir!r}))
"""


@pytest.mark.slow
def test_kill_minus_9_loses_at_most_the_game_in_progress(tmp_path: Path) -> None:
    """Events and rows are buffered, but flushed before every game: killed in game 3, the run directory holds
    games 1 and 2 in full (events and every table) and nothing of game 3 but, at most, some of its events."""
    run_dir = tmp_path / "killed"
    code = _KILL_AT_GAME_3.format(repo=str(REPO), run_dir=str(run_dir))
    env = {**os.environ, "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    ends = [e["game"] for e in events if e["type"] == "game_end"]
    assert ends == [1, 2]

    def table(name: str) -> list[dict[str, str]]:
        with (run_dir / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))

    assert [r["game"] for r in table("games")] == ["1", "2"]
    decisions = table("decisions")
    assert len(decisions) == sum(1 for e in events if e["type"] == "decision" and e["game"] <= 2)
    assert {r["game"] for r in decisions} == {r["game"] for r in table("agent_games")} == {"1", "2"}
    assert {r["game"] for r in table("predictions")} == {"1", "2"}
