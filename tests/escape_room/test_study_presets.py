"""The study presets ask as the study did: a seat's model solves its own puzzle and each verification
(``game.own_answer`` / ``game.verifier`` ``auto``), except for scripted agents and weak models."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trustsim import api
from trustsim.config import validate_config

REPO = Path(__file__).resolve().parents[2]
STUDY_PRESETS = ["smooth", "1strike", "2strike", "3strike", "mid2strike", "recur", "anchor", "anchor_dwrong"]
CARD_PARTS = ["anchor", "smooth", "1strike", "mid2strike", "recur"]


def solvers(cfg: dict) -> tuple[str, str]:
    """(own_answer, verifier) as the validated config records them (manifest, tables, run id)."""
    game = validate_config(cfg).cfg["game"]
    return game["own_answer"], game["verifier"]


@pytest.mark.parametrize(
    "path",
    [*(f"experiment/{p}.yaml" for p in STUDY_PRESETS), *(f"card/part/{p}.yaml" for p in CARD_PARTS)],
)
def test_every_study_preset_asks_as_the_study_did(path: str) -> None:
    game = yaml.safe_load((REPO / "conf" / path).read_text())["game"]
    assert (game["own_answer"], game["verifier"]) == ("auto", "auto")


@pytest.mark.parametrize("preset", STUDY_PRESETS)
def test_an_api_model_solves_and_verifies_itself(preset: str) -> None:
    assert solvers(api.compose(preset, ["agent=llm", "model=gpt-5.1"])) == ("llm", "llm")


@pytest.mark.parametrize(
    ("preset", "overrides", "expected"),
    [
        # the embedded default (make run): a weak model keeps exact answers
        ("mid2strike", [], ("exact", "exact")),
        ("smooth", ["model=smollm2"], ("exact", "exact")),
        # scripted agents solve exactly anyway: auto is exact, not an error (agent=bayes game.verifier=llm is)
        ("mid2strike", ["agent=bayes"], ("exact", "exact")),
        ("anchor", ["agent=consensus"], ("exact", "exact")),
        # an explicit setting wins: the embedded model can be asked too
        ("mid2strike", ["game.own_answer=llm"], ("llm", "exact")),
        ("mid2strike", ["model=gpt-5.1", "game.verifier=exact"], ("llm", "exact")),
        # any model flagged weak, here a seat's own, keeps the whole team's answers exact
        ("mid2strike", ["model=gpt-5.1", "game.seats.C.model=smollm2"], ("exact", "exact")),
        ("mid2strike", ["model=gpt-5.1", "+model.weak=true"], ("exact", "exact")),
        # one LLM seat among scripted ones asks its model
        (
            "mid2strike",
            ["agent=bayes", "game.seats.B.agent=llm", "game.seats.B.model=gpt-5.1"],
            ("llm", "llm"),
        ),
        # outside the study presets the game's default stays exact (specs/escape_room.md)
        (None, ["agent=llm", "model=gpt-5.1"], ("exact", "exact")),
        ("mixed_team", ["model=gpt-5.1"], ("exact", "exact")),
    ],
)
def test_auto_resolves_by_who_plays(preset: str | None, overrides: list[str], expected: tuple) -> None:
    assert solvers(api.compose(preset, overrides)) == expected


def test_the_trust_card_parts_ask_too_and_the_offline_card_does_not() -> None:
    model = api.compose(None, ["+experiment=trustcard", "+card/part=anchor", "model=gpt-5.1"])
    assert solvers(model) == ("llm", "llm")
    offline = api.compose(None, ["+experiment=trustcard_offline", "+card/offline=anchor"])
    assert solvers(offline) == ("exact", "exact")
