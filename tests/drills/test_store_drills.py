"""The request store on a read-only folder, from the command line: writing fails at start naming
``llm.store_path`` with a failed manifest; replay (``llm.replay_only=true``) works and sends nothing."""

from __future__ import annotations

import pytest

from trustsim.llm.fake_server import FakeServer

from ..llm.helpers import read_only
from .helpers import TABLES, TRACEBACK, llm_overrides, manifest, run_cli


@pytest.mark.slow
def test_read_only_store_from_the_command_line(tmp_path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "store.sqlite"
    with FakeServer() as server:
        args = llm_overrides(server.api_base, store, "game.games=1")
        first = run_cli([*args, f"hydra.run.dir={tmp_path / 'first'}"], tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        sent = len(server.requests)
        with read_only(folder) as prefix:
            write = run_cli([*args, f"hydra.run.dir={tmp_path / 'write'}"], tmp_path, prefix=prefix)
            replay = run_cli(
                [*args, "llm.replay_only=true", f"hydra.run.dir={tmp_path / 'replay'}"],
                tmp_path,
                prefix=prefix,
            )
        assert len(server.requests) == sent  # nothing was sent by either
    assert write.returncode == 2 and "llm.store_path" in write.stderr and TRACEBACK not in write.stderr
    m = manifest(tmp_path / "write")
    assert m["status"] == "failed" and "llm.store_path" in m["failure"]["reason"]
    assert "replay_only" in m["failure"]["resume"]
    assert replay.returncode == 0, replay.stderr[-2000:]
    assert manifest(tmp_path / "replay")["llm"]["calls_sent"] == 0
    for table in TABLES:
        assert (tmp_path / "replay" / table).read_bytes() == (tmp_path / "first" / table).read_bytes()
