"""The Mesa model: illegal and unparseable decisions are recorded as invalid and resolved as pass; rule
options; session-unique puzzles; the reveal event."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

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


class Recorder:
    """Collects events."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def event(self, type: str, **fields: Any) -> None:
        self.events.append({"type": type, **fields})


def play(a_decisions: list[Decision], coins: int = 4, recorder: Any = None, **rules: Any):
    options = dataclasses.replace(make_options("T", coins=coins), **rules)
    policies = {"A": Scripted(a_decisions), "B": Scripted([]), "C": Scripted([]), "D": ScriptedPartner()}
    start_all(policies)
    return asyncio.run(
        EscapeRoomModel(
            seed=1, game=1, options=options, policies=policies, partner_puzzle=4, recorder=recorder
        ).play()
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


def test_own_puzzle_verification_is_illegal_with_own_verify_illegal():
    rec = play([Decision(Action.verify(1))], own_verify="illegal")
    first = next(d for d in rec.decisions if d.seat == "A")
    assert first.invalid_reason == "verify_own_puzzle" and first.resolved.kind == "pass"


def test_own_puzzle_verification_is_charged_and_counted_by_default():
    rec = play([Decision(Action.verify(1))])
    first = next(d for d in rec.decisions if d.seat == "A")
    assert first.valid and first.resolved == Action.verify(1)
    report = rec.state.reports[0]
    assert report.verifications[0].already and rec.state.capsules[1][0].endorsers == ["A"]
    if "A" in rec.state.alive:
        assert rec.state.coins["A"] == 3
    cell = {
        "run_id": "r",
        "agent": "x",
        "model": "m",
        "memory": "none",
        "schedule": "t",
        "partner_slot": "fixed",
    }
    t = TableBuilder(cell, 0, {s: "m" for s in "ABCD"}, {s: "x" for s in "ABCD"}, set())
    assert t.game_row(rec)["verifications"] == "1"  # rows hold cell text
    row = next(r for r in t.agent_game_rows(rec) if r["seat"] == "A")
    assert row["verifications"] == "1"


@pytest.mark.parametrize(("rule", "resolved"), [("pass", "pass"), ("die", "volunteer")])
def test_malformed_volunteer_rule(rule: str, resolved: str):
    bad = Action.volunteer({1: "Q1-A", 2: "Q2-B", 3: "Q3-C"})  # no capsule named for Q4
    rec = play([Decision(bad)], malformed_volunteer=rule)
    first = next(d for d in rec.decisions if d.seat == "A")
    assert not first.valid and first.invalid_reason == "incomplete_password"
    assert first.resolved.kind == resolved
    report = rec.state.reports[0]
    if rule == "die":  # the only volunteer: chosen, and dies as a wrong password
        assert report.chosen_volunteer == "A" and report.password_correct is False
        assert ("A", "wrong_password") in report.deaths and report.password == {
            1: "Q1-A",
            2: "Q2-B",
            3: "Q3-C",
        }
    else:
        assert report.chosen_volunteer is None


@pytest.mark.parametrize(("rule", "resolved"), [("pass", "pass"), ("die", "volunteer")])
def test_a_volunteer_naming_no_capsule_is_told_alike_in_events_tables_and_announcements(rule, resolved):
    """A malformed volunteer whose password names no capsule: the decision event, decisions.csv and the round's
    announcement agree on what it resolved as (under ``die`` it stays a volunteer; it was announced as Pass)."""
    recorder = Recorder()
    rec = play([Decision(Action.volunteer({}), raw_text="volunteer with no capsules")], recorder=recorder,
               malformed_volunteer=rule)  # fmt: skip
    event = next(e for e in recorder.events if e["type"] == "decision" and e["seat"] == "A")
    cell = {
        "run_id": "r",
        "agent": "x",
        "model": "m",
        "memory": "none",
        "schedule": "t",
        "partner_slot": "fixed",
    }
    t = TableBuilder(cell, 0, {s: "m" for s in "ABCD"}, {s: "x" for s in "ABCD"}, set())
    row = next(r for r in t.decision_rows(rec) if r["seat"] == "A" and r["round"] == "1")
    assert (row["action"], row["valid"], row["invalid_reason"]) == (
        "volunteer",
        "false",
        "incomplete_password",
    )
    assert event["action"] == "Volunteer" and not event["valid"]
    assert row["resolved_action"] == resolved
    assert event["resolved"] == {"pass": "Pass", "volunteer": "Volunteer"}[resolved]
    assert rec.state.reports[0].actions["A"] == event["resolved"]


def test_reveal_after_game_leaves_a_reveal_event():
    recorder = Recorder()
    rec = play([], recorder=recorder, reveal_after_game=True)
    (reveal,) = [e for e in recorder.events if e["type"] == "reveal"]
    assert reveal["capsules"] == {
        c.label: c.value == rec.state.puzzles[k].answer
        for k, caps in rec.state.capsules.items()
        for c in caps
    }
    assert reveal["capsules"]["Q1-A"] is True
    quiet = Recorder()
    play([], recorder=quiet)
    assert not [e for e in quiet.events if e["type"] == "reveal"]


@pytest.mark.slow
def test_puzzles_are_unique_within_each_of_1000_sessions():
    options = make_options("T" * 11)
    policies = {s: NeverVerify() for s in "ABC"} | {"D": ScriptedPartner()}
    start_all(policies)
    repeats_without = 0
    for session in range(1000):
        used: set[str] = set()
        texts: list[str] = []
        plain: list[str] = []
        for game in range(1, 12):
            seed = session * 100 + game
            model = EscapeRoomModel(
                seed=seed, game=game, options=options, policies=policies, partner_puzzle=4, used_puzzles=used
            )
            texts += [p.text for p in model.puzzles]
            plain += [p.text for p in EscapeRoomModel(seed=seed, game=game, options=options, policies=policies,
                                                      partner_puzzle=4).puzzles]  # fmt: skip
        assert len(texts) == len(set(texts)) == 44, session
        assert len(used) == 44
        repeats_without += len(plain) != len(set(plain))
    assert repeats_without > 50  # without the session's used set, repeats do happen (the bug this fixes)


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
    assert game["escaped"] == "false" and game["verifications"] == "0"  # rows hold cell text
    assert game["deaths_wrong_password"] == "3"
    rows = t.agent_game_rows(rec)
    assert sum(r["survived"] == "false" for r in rows) == len(rec.state.deaths)
    assert all(r["score"] == "0" for r in rows)


def test_a_session_needing_more_puzzles_than_the_generator_supplies_is_a_config_error():
    from games.escape_room.puzzles import all_puzzles, check_session_size, max_session_games
    from trustsim.errors import ConfigError

    limit = max_session_games(4)
    assert 1000 < limit < len(all_puzzles()) // 4 + 1
    check_session_size(limit, 4)
    with pytest.raises(ConfigError, match=r"game\.games.*needs \d+ distinct puzzles.*supplies \d+ puzzles"):
        check_session_size(limit + 1, 4)


def test_a_reused_model_deals_the_same_games_as_new_models():
    """One table (Mesa model) for sessions played one after another: ``next_game`` reseeds and resets and
    ``next_session`` seats new policies, so each game (puzzles, sealed capsules, draws, decisions) equals the
    game a fresh model seeded alike plays."""
    from agents.escape_room.bayes import BayesAgent

    options = make_options("TTFFTTFTFT")

    def team() -> dict[str, EscapeRoomPolicy]:
        policies = {s: BayesAgent() for s in "ABC"} | {"D": ScriptedPartner()}
        start_all(policies)
        return policies

    def digest(rec: Any) -> tuple[Any, ...]:
        state = rec.state
        return (rec.seed, state.outcome, state.round, tuple(state.deaths), dict(state.coins),
                [(d.seat, d.round, d.resolved.describe()) for d in rec.decisions])  # fmt: skip

    fresh_team, reused_team = team(), team()
    fresh_used: set[str] = set()
    model = None
    for game in range(1, len(options.d_correct) + 1):
        seed = 1000 + 7 * game
        fresh = EscapeRoomModel(seed=seed, game=game, options=options, policies=fresh_team, partner_puzzle=4,
                                used_puzzles=fresh_used).play_sync()  # fmt: skip
        if model is None:
            model = EscapeRoomModel(
                seed=seed, game=game, options=options, policies=reused_team, partner_puzzle=4
            )
        else:
            model.next_game(seed=seed, game=game)
        assert model.steps == 0 and model.record.game == game
        assert digest(model.play_sync()) == digest(fresh)
        assert model.steps == model.state.round  # Mesa counts the rounds of the game in play
    assert len(model.agents) == 4  # the seats were created once
    # the next session at the same table (another partner slot, new policies) plays as at a new table
    next_team, table_team = team(), team()
    fresh = EscapeRoomModel(
        seed=77, game=1, options=options, policies=next_team, partner_puzzle=2
    ).play_sync()
    model.next_session(session=1, policies=table_team, partner_puzzle=2, seed=77)
    assert (
        model.session == 1
        and model.owners[2] == "D"
        and not model.used_puzzles - {p.text[8:-1] for p in model.puzzles}
    )
    assert all(model.seats[s].policy is table_team[s] for s in "ABCD")
    assert digest(model.play_sync()) == digest(fresh) and len(model.agents) == 4


def test_announcements_render_when_read_and_equal_the_texts():
    """An observation's history renders each round's announcement when first read (scripted games render
    none) and behaves as the tuple of the texts."""
    from games.escape_room.types import Announcements

    class Seen(EscapeRoomPolicy):
        name = "seen"

        def __init__(self) -> None:
            super().__init__(memory="none")
            self.histories: list[Any] = []

        def decide(self, obs: Observation) -> Decision:
            self.histories.append(obs.history)
            return Decision(Action.pass_())

    options = make_options("T", coins=4)
    policies = {"A": Seen(), "B": Scripted([]), "C": Scripted([]), "D": ScriptedPartner()}
    start_all(policies)
    model = EscapeRoomModel(seed=3, game=1, options=options, policies=policies, partner_puzzle=4)
    rec = model.play_sync()
    histories = policies["A"].histories
    assert model._texts == []  # nobody read an announcement: none was rendered
    texts = tuple(r.text() for r in rec.state.reports)
    last = histories[-1]
    assert isinstance(last, Announcements) and len(last) == len(histories) - 1
    assert last == texts[: len(last)] and hash(last) == hash(texts[: len(last)])
    assert (
        list(last) == list(texts[: len(last)]) and last[-1] == texts[len(last) - 1] and last[:2] == texts[:2]
    )
    with pytest.raises(IndexError):
        last[len(last)]
    assert histories[0] == () and len(model._texts) == len(last)  # rendered once, shared by later readers


def test_decision_events_keep_each_stated_value_exactly(tmp_path) -> None:
    """A stated value is written as stated: 1 vs 1.0 and 0.0 vs -0.0 stay apart, seat after seat."""
    import json

    from trustsim.rundir import RunRecorder

    stated = {
        "A": {1: 0.0, 2: -0.0, 3: 1, 4: 1.0},
        "B": {1: -0.0, 2: 0.0, 3: 1.0, 4: 1},
        "C": {1: 0.0, 2: -0.0},
    }
    policies = {s: Scripted([Decision(Action.pass_(), confidence=c)]) for s, c in stated.items()}
    policies["D"] = ScriptedPartner()
    start_all(policies)
    recorder = RunRecorder(tmp_path)
    model = EscapeRoomModel(
        seed=1, game=1, options=make_options("T"), policies=policies, partner_puzzle=4, recorder=recorder
    )
    model.play_sync()
    recorder.close()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    first = [line for line in lines if '"type":"decision"' in line and '"round":1,' in line]
    assert [line.split('"confidence":', 1)[1][:-1] for line in first[:3]] == [
        '{"1":0.0,"2":-0.0,"3":1,"4":1.0}',
        '{"1":-0.0,"2":0.0,"3":1.0,"4":1}',
        '{"1":0.0,"2":-0.0}',
    ]
    assert [json.loads(line)["seq"] for line in lines] == list(range(len(lines)))
