"""Post-hoc confidence extraction: sources, strict parsing, the LLM path (fake client and litellm mock)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.__main__ import main as analysis_main
from games.arena.reasoning import arena_run
from games.escape_room.reasoning import escape_room_reference, reference_runs
from games.predictions import PREDICTION_COLUMNS
from trustsim.extract.__main__ import main as extract_main
from trustsim.extract.extractor import SCHEMA, extract, parse_probability
from trustsim.extract.sources import SourceError
from trustsim.llm import parse_model_config
from trustsim.llm.types import ChatResponse

# the shared folder sits next to the repository (../shared); TRUSTSIM_SHARED overrides, as for tests/analysis
SHARED = (
    Path(os.environ.get("TRUSTSIM_SHARED") or Path(__file__).resolve().parents[3] / "shared")
    / "data"
    / "escape-room-v2"
    / "examples-74f0fd1"
)
needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="shared escape-room logs not present")


class FakeClient:
    """Answers by keyword: 'confident' → 0.9, else 0.3; remembers requests."""

    def __init__(self) -> None:
        self.requests: list = []
        self.model = parse_model_config(
            {"name": "fake", "litellm_model": "openai/fake", "structured_output": "schema"}
        )

    async def complete(self, req):  # type: ignore[no-untyped-def]
        self.requests.append(req)
        p = 0.9 if "confident" in req.messages[1]["content"].lower() else 0.3
        return ChatResponse(json.dumps({"probability": p}), 50, 5, 0.0, False, 0.0)


@pytest.mark.parametrize(
    ("text", "p", "reason"),
    [
        ('{"probability": 0.8}', 0.8, None),
        ('{"probability": 1}', 1.0, None),
        ('{"probability": null}', None, "no_implied_probability"),
        ('{"probability": 80}', None, "out_of_range"),
        ('{"probability": "high"}', None, "not_a_number"),
        ("0.8", None, "unparseable"),
        ('{"p": 0.8}', None, "unparseable"),
        ("", None, "empty"),
        ('I would say {"probability": 0.4}.', 0.4, None),  # unconstrained answers: the kit's extraction
    ],
)
def test_parse_probability(text: str, p, reason) -> None:
    assert parse_probability(text) == (p, reason)


def test_schema_allows_null() -> None:
    assert SCHEMA["required"] == ["probability"] and "null" in SCHEMA["properties"]["probability"]["type"]


@needs_shared
def test_escape_room_reference_items() -> None:
    runs = reference_runs(SHARED)
    assert len(runs) == 2
    memoryless = next(r for r in runs if "memoryless" in r.name)
    items = list(escape_room_reference(memoryless))
    games = sorted(memoryless.glob("game_*.json"))
    expected = sum(
        1
        for g in games
        for rnd in json.loads(g.read_text())["rounds"]
        for seat, text in (rnd.get("reasoning") or {}).items()
        if seat != "D" and isinstance(text, str) and text.strip()
    )
    assert len(items) == expected > 0
    assert {i.row["memory"] for i in items} == {"none"} and {i.row["schedule"] for i in items} == {"anchor"}
    assert {i.outcome for i in items} == {1}  # D correct in every game of the anchor run
    assert not any(i.text.startswith("DECISION") for i in items)
    smooth = next(r for r in runs if "smooth" in r.name)
    assert {i.row["schedule"] for i in escape_room_reference(smooth)} == {"smooth"}


def test_missing_source_dir(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such directory"):
        reference_runs(tmp_path / "nope")


@needs_shared
def test_fake_extraction_to_calibration_report(tmp_path: Path, capsys) -> None:
    from trustsim.extract.output import write_outputs

    items = [i for r in reference_runs(SHARED) for i in escape_room_reference(r)][:40]
    assert len(items) == 40
    client = FakeClient()
    results = asyncio.run(extract(items, client, "fake"))
    assert (
        len(client.requests) == 40 and client.requests[0].params["response_format"]["type"] == "json_schema"
    )
    assert all(r.p in (0.3, 0.9) for r in results)
    out = tmp_path / "ext"
    write_outputs(
        out,
        results,
        source="extracted:fake",
        game_type="escape_room",
        prediction_columns=PREDICTION_COLUMNS,
        extractor_model="fake",
        sources=["x"],
    )
    preds = pd.read_csv(out / "predictions.csv")
    assert set(preds["source"]) == {"extracted:fake"} and len(preds) == 40
    capsys.readouterr()
    assert analysis_main(["calibration", str(out), "--out", str(tmp_path / "rep"), "--resamples", "50"]) == 0
    assert "run identity" not in capsys.readouterr().err  # trustsim's own output identifies itself
    summary = pd.read_csv(tmp_path / "rep" / "summary.csv")
    assert summary["source"].tolist() == ["extracted:fake"] and summary["n"].iloc[0] == 40


@needs_shared
def test_cli_with_litellm_mock_is_cached_on_rerun(tmp_path: Path, capsys) -> None:
    model = {
        "name": "mock-extractor",
        "litellm_model": "openai/mock-extractor",
        "structured_output": "schema",
        "params": {"mock_response": json.dumps({"probability": 0.75})},
    }
    mf = tmp_path / "model.yaml"
    mf.write_text(yaml.safe_dump(model))
    args = [
        str(SHARED),
        "--out",
        str(tmp_path / "out"),
        "--model-file",
        str(mf),
        "--store",
        str(tmp_path / "s.sqlite"),
    ]
    assert extract_main([*args, "--limit", "6"]) == 0
    ext = pd.read_csv(tmp_path / "out" / "extractions.csv")
    assert len(ext) == 6 and (ext["p"] == 0.75).all()
    first = (tmp_path / "out" / "extractions.csv").read_bytes()
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["llm"]["calls_sent"] == 6
    assert extract_main([*args, "--limit", "6"]) == 0
    assert (tmp_path / "out" / "extractions.csv").read_bytes() == first  # replayed, identical
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["llm"]["cache_hits"] == 6 and manifest["llm"]["calls_sent"] == 0
    assert manifest["status"] == "complete" and manifest["counts"]["with_probability"] == 6
    assert "6 texts" in capsys.readouterr().out


def test_cli_bad_model(tmp_path: Path, capsys) -> None:
    src = tmp_path / "logs" / "run1"
    src.mkdir(parents=True)
    (src / "experiment_settings.json").write_text("{}")
    (src / "game_1.json").write_text(
        json.dumps({"rounds": [{"round": 1, "reasoning": {"A": "REASONING: fine"}}]})
    )
    assert extract_main([str(tmp_path / "logs"), "--out", str(tmp_path / "o"), "--model", "nope"]) == 2
    assert "model config" in capsys.readouterr().err


def test_arena_reasoning_without_probability(run_job_dir, tmp_path: Path) -> None:
    reply = json.dumps({"reasoning": "they seem nice", "move": "C", "p_opponent_cooperates": None})
    code, run = run_job_dir(
        [
            "+experiment=ipd",
            "agent=llm",
            "game.rounds=3",
            "model.name=mock",
            "model=scripted",
            "+model.litellm_model=openai/mock-model",
            f"+model.params.mock_response='{reply}'",
            f"llm.store_path={tmp_path / 'store.sqlite'}",
        ]
    )
    assert code == 0
    assert pd.read_csv(run / "predictions.csv")["p"].isna().all()  # missing stays missing
    items = list(arena_run(run))
    assert len(items) == 3 and all(i.outcome == 1 for i in items)  # tit-for-tat cooperated each round
    assert items[0].row["subject"] == "tit_for_tat" and items[0].row["cluster"] == "s0m000"


def test_escape_room_run_source(tmp_path: Path) -> None:
    from games.escape_room.reasoning import escape_room_run

    run = tmp_path / "run"
    run.mkdir()
    manifest = {
        "run_id": "er-1",
        "game": "escape_room",
        "status": "complete",
        "cell": {"model": "m", "agent": "llm", "memory": "none", "schedule": "2strike"},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    events = [
        {"seq": 0, "type": "game_start", "session": 0, "game": 1, "d_correct": False, "partner_puzzle": 2},
        {
            "seq": 1,
            "type": "decision",
            "session": 0,
            "game": 1,
            "round": 1,
            "seat": "A",
            "reasoning": "D looks wrong",
        },
        {"seq": 2, "type": "decision", "session": 0, "game": 1, "round": 1, "seat": "D", "action": "pass"},
        {"seq": 3, "type": "game_start", "session": 1, "game": 1, "d_correct": True, "partner_puzzle": 4},
        {
            "seq": 4,
            "type": "decision",
            "session": 1,
            "game": 1,
            "round": 2,
            "seat": "B",
            "reasoning": "trust D",
        },
    ]
    (run / "events.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n{trunc")
    items = list(escape_room_run(run))
    assert [(i.outcome, i.row["cluster"], i.row["item"], i.row["round"]) for i in items] == [
        (0, "s0", "Q2:A", 1),
        (1, "s1", "Q4:B", 2),
    ]
    assert items[0].row["schedule"] == "2strike" and "Q2" in items[0].question
