"""The Mesa model: illegal and unparseable decisions are recorded as invalid and resolved as pass."""

from __future__ import annotations

import asyncio

import pytest

from agents.escape_room.base import EscapeRoomPolicy
from agents.escape_room.partner import ScriptedPartner
from agents.escape_room.scripted import NeverVerify
from games.escape_room.model import EscapeRoomModel
from games.escape_room.tables import TableBuilder
from games.escape_room.types import Action, Decision, Observation
from tests.escape_room.helpers import make_options, start_all


class Scripted(EscapeRoomPolicy):
    """Returns a fixed list of decisions, one per round."""

    name = "scripted_list"

    def __init__(self, decisions: list[Decision]) -> None:
        super().__init__(memory="none")
        self.queue = list(decisions)

    def decide(self, obs: Observation) -> Decision:
        return self.queue.pop(0) if self.queue else Decision(Action.pass_())


def play(a_decisions: list[Decision], coins: int = 4):
    options = make_options("T", coins=coins)
    policies = {"A": Scripted(a_decisions), "B": Scripted([]), "C": Scripted([]), "D": ScriptedPartner()}
    start_all(policies)
    return asyncio.run(
        EscapeRoomModel(seed=1, game=1, options=options, policies=policies, partner_puzzle=4).play()
    )


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        (Decision(None, raw_text="I think I will... maybe", parse_error="no JSON"), "unparseable"),
        (Decision(Action.volunteer({1: "Q1-A", 2: "Q2-B", 3: "Q3-C", 4: "Q4-nobody"})), "missing_capsule"),
        (Decision(Action.verify(7)), "bad_target"),
    ],
)
def test_illegal_and_unparseable_decisions_resolve_as_pass(decision, reason):
    rec = play([decision])
    first = next(d for d in rec.decisions if d.seat == "A")
    assert first.invalid_reason == reason and not first.valid
    assert first.resolved.kind == "pass"
    assert first.requested == ("invalid" if decision.action is None else decision.action.kind)
    assert first.decision.raw_text == decision.raw_text  # raw text kept
    assert rec.state.reports[0].actions["A"] == "Pass"


def test_verify_without_coins_is_invalid():
    rec = play([Decision(Action.verify(2))], coins=0)
    first = next(d for d in rec.decisions if d.seat == "A")
    assert first.invalid_reason == "no_coins" and first.resolved.kind == "pass"


def test_tables_count_what_happened():
    options = make_options("F")
    policies = {s: NeverVerify() for s in "ABC"} | {"D": ScriptedPartner()}
    start_all(policies)
    rec = asyncio.run(
        EscapeRoomModel(seed=5, game=1, options=options, policies=policies, partner_puzzle=4).play()
    )
    cell = {
        "run_id": "r",
        "agent": "never_verify",
        "model": "scripted",
        "memory": "none",
        "schedule": "t",
        "partner_slot": "fixed",
    }
    t = TableBuilder(cell, 0, {s: "scripted" for s in "ABCD"}, {s: "x" for s in "ABCD"}, set())
    game = t.game_row(rec)
    # D is wrong and nobody verifies: every round a volunteer dies, D survives alone or is eliminated.
    assert game["escaped"] is False and game["verifications"] == 0
    assert game["deaths_wrong_password"] == 3
    rows = t.agent_game_rows(rec)
    assert sum(not r["survived"] for r in rows) == len(rec.state.deaths)
    assert all(r["score"] == 0 for r in rows)
