"""The round trip: an Inspect-run task and the same trustsim jobs, both against one loopback server, send the
same requests and write the same tables (the run id aside: it hashes the model config, whose ``litellm_model``
names Inspect in one and litellm's id in the other)."""

from __future__ import annotations

import io
from collections import Counter

import pandas as pd
import pytest

from tests.inspect.conftest import eval_task, game_reply, inspect_service, run_files
from trustsim import api
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_ROUND_TRIP_KEY"


def _tables(files):
    return {n: pd.read_csv(io.StringIO(t)) for n, t in files.items() if n.endswith(".csv")}


@pytest.mark.parametrize(
    ("task", "args"),
    [
        ("escape_room", {"runs": 2, "overrides": ["game.games=2"]}),
        ("trust_game", {"pairs": 2, "overrides": ["game.rounds=2"]}),
        ("reliance", {"limit": 1, "model_preset": "vllm"}),  # its structured output: a JSON schema
    ],
)
def test_inspect_task_equals_trustsim_jobs(task, args, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-round-trip-not-a-key")
    with FakeServer(reply=game_reply) as server:
        model = inspect_service(monkeypatch, "fake", server)
        log = eval_task(task, tmp_path / "logs", model=model, task_args=args)
        sent_by_inspect = Counter(server.body_digests())
        assert sent_by_inspect and len(log.samples) == (1 if task == "reliance" else 2)
        for sample in log.samples:
            before = len(server.requests)
            again = [o for o in sample.metadata["trustsim_overrides"] if not o.startswith("model=")]
            preset = next(o for o in sample.metadata["trustsim_overrides"] if o.startswith("model="))
            result = api.run(
                None,
                [*again, preset, f"model.name={model}", "model.litellm_model=openai/fake-model",
                 f"model.api_base={server.api_base}", f"model.api_key_env={KEY_ENV}",
                 f"llm.store_path={tmp_path / sample.id / 'store.sqlite'}", "progress=false"],
                run_dir=tmp_path / sample.id / "run",
            )  # fmt: skip
            assert result.status == "complete", result.failure
            by_inspect = _tables(run_files(sample))
            assert set(by_inspect) == {p.name for p in result.run_dir.glob("*.csv")}
            assert any(len(frame) for frame in by_inspect.values())
            for name, frame in by_inspect.items():
                mine = pd.read_csv(result.run_dir / name)
                pd.testing.assert_frame_equal(
                    frame.drop(columns="run_id"), mine.drop(columns="run_id"), obj=name
                )
            sent_by_trustsim = Counter(server.body_digests()[before:])
            assert sent_by_trustsim <= sent_by_inspect  # each job sent what its sample sent
            sent_by_inspect -= sent_by_trustsim
        assert not sent_by_inspect
