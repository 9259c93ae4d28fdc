"""A small corpus for the viewer tests: one run of every game family (the escape room with an LLM agent on the
fake server, so reasoning, confidence and an invalid answer are in it, and a second short one where the model
also solves its own puzzles, verifies and reflects between games), two reference-study runs, and an analysis
report next to the runs; built into a site once per test session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, analysis_cli, built_once, run_in_process
from trustsim.llm.fake_server import FakeServer

KEY_ENV = "TRUSTSIM_VIEW_TEST_KEY"
REFERENCE_RUNS = ("main_gpt5_mini_recovery_20260520_012127", "main_gpt5_mini_smooth_20260520_200744")
INVALID_TEXT = "I would rather not answer in JSON today."
PUZZLE_ANSWER = (
    "The answer is 7."  # a puzzle call's answer (own answer or verification), right by chance only
)
REFLECTION = "D was wrong once; I verify Q4 before trusting it next game."


def _reply(body: dict) -> str:
    """A puzzle call answers 7, a reflection one sentence; a decision verifies the partner's puzzle when D failed
    before, else passes; every 7th decision is not JSON (invalid)."""
    text = body["messages"][-1]["content"]
    if text.endswith("Reply with the integer answer only."):
        return PUZZLE_ANSWER
    if "Write a reflection of at most" in text:
        return REFLECTION
    _reply.calls += 1  # type: ignore[attr-defined]
    if _reply.calls % 7 == 3:  # type: ignore[attr-defined]
        return INVALID_TEXT
    conf = {"Q1": 0.9, "Q2": 0.9, "Q3": 0.9, "Q4": 0.4}
    if _reply.calls % 3 == 0:  # type: ignore[attr-defined]
        return json.dumps(
            {
                "action": "verify",
                "target": 4,
                "confidence": conf,
                "reasoning": "D was wrong in an earlier game, so I check Q4 before trusting it.",
            }
        )
    return json.dumps({"action": "pass", "confidence": conf, "reasoning": "Waiting for more endorsements."})


_reply.calls = 0  # type: ignore[attr-defined]


def _reference_root() -> Path:
    shared = Path(os.environ.get("TRUSTSIM_SHARED", REPO.parent / "shared"))
    runs = shared / "data" / "escape-room-v2" / "runs"
    if runs.is_dir():
        return runs
    from analysis.reference_data import reference_dir

    return reference_dir() / "runs"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    os.environ[KEY_ENV] = "sk-view-test-not-a-key"
    return built_once(tmp_path_factory, "view_corpus", _build_corpus)[0] / "runs"


def _build_corpus(root: Path) -> None:
    runs = root / "runs"
    with FakeServer(reply=_reply) as server:
        llm = [
            "+experiment=mid2strike",
            "agent=llm",
            "agent.prompt=trustsim",
            "model=openai_compatible",
            f"model.api_base={server.api_base}",
            "model.litellm_model=openai/fake-model",
            f"model.api_key_env={KEY_ENV}",
            f"llm.store_path={root / 'store.sqlite'}",
            "game.games=5",
            "game.own_answer=exact",  # the model's decisions are the subject (the study presets would
            "game.verifier=exact",  # also ask it to solve and verify)
        ]
        code = run_in_process(llm, runs / "escape_llm")
        assert code == 0
        # the model's other calls: its own answers, its verifications and its reflections between games
        code = run_in_process(
            [
                *llm[:-3],
                "memory=reflection",
                "game.games=2",
                "game.own_answer=llm",
                "game.verifier=llm",
            ],
            runs / "escape_llm_calls",
        )
        assert code == 0
    # a trust game of two model players (litellm's mock_response): each exchange's two requests
    mock = {"send": 6, "expected_return": 9, "p_return_at_least_sent": 0.7, "return": 9, "reasoning": "split"}
    tg_llm = [
        "+experiment=trust_game_repeated",
        "agent=llm",
        "game.pairs=2",
        "game.rounds=2",
        "model=scripted",
    ]
    tg_llm += [
        "model.name=mock",
        "+model.litellm_model=openai/mock",
        f"llm.store_path={root / 'store.sqlite'}",
    ]
    assert (
        run_in_process([*tg_llm, f"+model.params.mock_response='{json.dumps(mock)}'"], runs / "tg_llm") == 0
    )
    for name, overrides in {
        "escape_bayes": ["+experiment=mid2strike", "agent=bayes", "runs=2"],
        "reliance": ["+experiment=reliance", "agent=oracle", "game.limit=3"],
        "arena": ["+experiment=ipd"],
        "trust_game": ["+experiment=trust_game_repeated", "agent=tg_reciprocal", "game.pairs=3"],
    }.items():
        assert run_in_process(overrides, runs / name) == 0, name
    # a job that fails at start (a bad value): the index must show it with its reason
    assert run_in_process(["+experiment=mid2strike", "agent=bayes", "game.coins=-1"], runs / "failed") == 2
    reference = _reference_root()
    for name in REFERENCE_RUNS:
        shutil.copytree(reference / name, runs / "reference" / name)
    report = analysis_cli("arena", str(runs / "arena"), "--out", str(runs / "report_arena"))
    assert report.returncode == 0, report.stderr


def view(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m analysis view ARGS``, in this process."""
    return analysis_cli("view", *args)


@pytest.fixture(scope="session")
def site(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    def build(root: Path) -> None:
        proc = view(str(corpus), "--out", str(root / "site"))
        assert proc.returncode == 0, proc.stderr
        assert "run(s)" in proc.stdout

    return built_once(tmp_path_factory, "view_site", build)[0] / "site"


def read_data(site: Path, rel: str):
    """The data object of one ``TS.put(key, data);`` file."""
    text = (site / "data" / rel).read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : text.rindex(")")])
