"""Mixed teams through Inspect's model roles: each seat's, player's or role's calls reach only its own server."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO
from tests.inspect.conftest import eval_task, game_reply, inspect_service, read_log, run_files
from trustsim.llm.fake_server import FakeServer

INSPECT = str(Path(sys.executable).with_name("inspect"))


@pytest.mark.slow
def test_escape_room_seat_c_plays_its_own_model(tmp_path, monkeypatch):
    """``inspect eval ... --model <one> --model-role seat_c=<two>`` (the command, in a subprocess)."""
    with FakeServer(reply=game_reply) as one, FakeServer(reply=game_reply) as two:
        main, other = inspect_service(monkeypatch, "one", one), inspect_service(monkeypatch, "two", two)
        proc = subprocess.run(
            [INSPECT, "eval", "trustsim/escape_room", "--model", main, "--model-role", f"seat_c={other}",
             "-T", "overrides=[game.games=2, game.max_rounds=2, game.own_answer=exact, game.verifier=exact]", "--log-dir", str(tmp_path), "--display", "none"],
            cwd=REPO, capture_output=True, text=True, timeout=600, env=dict(os.environ),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (path,) = tmp_path.glob("*.eval")
    (sample,) = read_log(path).samples
    files = run_files(sample)
    decisions = pd.read_csv(io.StringIO(files["decisions.csv"]))
    tested = decisions[~decisions["is_partner"]]
    assert tested.groupby("seat")["model"].unique().map(list).to_dict() == {
        "A": [main],
        "B": [main],
        "C": [other],
    }
    assert len(one.requests) == int(tested["seat"].isin(["A", "B"]).sum()) > 0
    assert len(two.requests) == int((tested["seat"] == "C").sum()) > 0
    games = pd.read_csv(io.StringIO(files["games.csv"]))
    assert set(games["team"]) == {f"A=llm:{main};B=llm:{main};C=llm:{other}"}
    roles = {e.role for e in sample.events if e.event == "model"}
    assert roles == {None, "seat_c"}  # Inspect's log names the role of each seat_c call


def test_trust_game_trustee_and_arena_opponent_roles(tmp_path, monkeypatch):
    with FakeServer(reply=game_reply) as one, FakeServer(reply=game_reply) as two:
        main, other = inspect_service(monkeypatch, "one", one), inspect_service(monkeypatch, "two", two)
        tg = eval_task("trust_game", tmp_path / "tg", model=main, model_roles={"trustee": other},
                       task_args={"pairs": 1, "model_preset": "vllm", "overrides": ["game.rounds=2"]})  # fmt: skip
        exchanges = pd.read_csv(io.StringIO(run_files(tg.samples[0])["exchanges.csv"]))
        assert set(exchanges["trustor_model"]) == {main} and set(exchanges["trustee_model"]) == {other}
        sent = (exchanges["sent"] > 0).sum()
        assert (len(one.requests), len(two.requests)) == (
            len(exchanges),
            sent,
        )  # a trustee answers what it got
        before = len(one.requests), len(two.requests)
        arena = eval_task("arena", tmp_path / "arena", model=main, model_roles={"opponent": other},
                          task_args={"rounds": 3, "model_preset": "vllm"})  # fmt: skip
        moves = pd.read_csv(io.StringIO(run_files(arena.samples[0])["moves.csv"]))
        models = moves.groupby("seat")["model"].unique().map(list).to_dict()
        assert sorted(models.values()) == sorted([[main], [other]])
        assert (len(one.requests) - before[0], len(two.requests) - before[1]) == (3, 3)
