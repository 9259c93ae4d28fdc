"""Every resolution path of the escape-room rules, without Mesa."""

from __future__ import annotations

import random

from games.escape_room.rules import (
    NO_VOLUNTEER,
    WRONG_PASSWORD,
    GameState,
    RuleOptions,
    illegal_reason,
    new_game,
    resolve_round,
)
from games.escape_room.types import Action
from tests.escape_room.helpers import OWNERS, PUZZLES, make_state, originals

P = Action.pass_()


class FixedRng(random.Random):
    """randrange always returns a chosen index."""

    def __init__(self, index: int) -> None:
        super().__init__(0)
        self.index = index

    def randrange(self, n: int) -> int:  # type: ignore[override]
        return min(self.index, n - 1)


def test_capsules_start_sealed_and_endorsed_by_owner():
    state = make_state()
    assert [c.label for c in state.capsules[4]] == ["Q4-D"]
    assert state.capsules[4][0].endorsers == ["D"]
    assert state.coins == {"A": 4, "B": 4, "C": 4, "D": 4}


def test_matching_verification_endorses_and_costs_a_coin():
    state = make_state()
    report = resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    assert state.capsules[4][0].endorsers == ["D", "A"]
    assert state.coins["A"] == 3
    assert report.verifications[0].created is False


def test_disagreeing_verification_opens_new_capsule():
    state = make_state(d_value=13)
    resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    assert [c.label for c in state.capsules[4]] == ["Q4-D", "Q4-A"]
    assert state.capsules[4][1].endorsers == ["A"]


def test_later_verifier_endorses_capsule_created_earlier_in_the_same_round():
    state = make_state(d_value=13)
    resolve_round(
        state, {"A": Action.verify(4), "B": Action.verify(4), "C": P, "D": P}, {"A": 12, "B": 12}, FixedRng(0)
    )
    assert [c.label for c in state.capsules[4]] == ["Q4-D", "Q4-A"]
    assert state.capsules[4][1].endorsers == ["A", "B"]


def test_repeat_disagreement_by_same_seat_gets_unique_label():
    state = make_state(d_value=13)
    resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 20}, FixedRng(0))
    resolve_round(
        state,
        {"A": Action.verify(4), "B": Action.volunteer(originals()), "C": P, "D": P},
        {"A": 21},
        FixedRng(0),
    )
    assert [c.label for c in state.capsules[4]] == ["Q4-D", "Q4-A", "Q4-A2"]


def test_correct_volunteer_escapes_and_ends_game():
    state = make_state()
    report = resolve_round(
        state, {"A": Action.volunteer(originals()), "B": P, "C": P, "D": P}, {}, FixedRng(0)
    )
    assert report.escaped and state.escaped and state.over
    assert state.outcome == "escaped"
    assert state.escape_round == 1
    assert state.score("A") == 4 and state.score("D") == 4


def test_wrong_password_kills_the_volunteer_and_game_goes_on():
    state = make_state(d_value=13)
    report = resolve_round(
        state, {"A": Action.volunteer(originals()), "B": P, "C": P, "D": P}, {}, FixedRng(0)
    )
    assert report.deaths == (("A", WRONG_PASSWORD),)
    assert "A" not in state.alive and not state.over
    assert state.score("A") == 0


def test_one_volunteer_is_chosen_at_random_others_ignored():
    state = make_state(d_value=13)
    pw = originals()
    report = resolve_round(
        state,
        {"A": Action.volunteer(pw), "B": Action.volunteer(pw), "C": Action.volunteer(pw), "D": P},
        {},
        FixedRng(2),
    )
    assert report.chosen_volunteer == "C"
    assert report.deaths == (("C", WRONG_PASSWORD),)
    assert state.alive == ["A", "B", "D"]


def test_no_volunteer_eliminates_a_random_alive_seat_partner_included():
    state = make_state()
    report = resolve_round(state, {"A": P, "B": P, "C": P, "D": P}, {}, FixedRng(3))
    assert report.deaths == (("D", NO_VOLUNTEER),)


def test_numeric_password_check_uses_capsule_values_per_slot():
    state = make_state(d_value=13)
    resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    pw = originals() | {4: "Q4-A"}
    report = resolve_round(state, {"A": P, "B": Action.volunteer(pw), "C": P}, {}, FixedRng(0))
    assert report.password_correct is True and state.escaped


def test_game_ends_after_max_rounds():
    state = make_state(max_rounds=2)
    resolve_round(state, {"A": P, "B": P, "C": P, "D": P}, {}, FixedRng(0))
    assert not state.over
    resolve_round(state, {s: P for s in state.alive}, {}, FixedRng(0))
    assert state.over and state.outcome == "max_rounds"


def test_game_ends_when_all_dead():
    state = make_state(max_rounds=10)
    for _ in range(4):
        resolve_round(state, {s: P for s in state.alive}, {}, FixedRng(0))
    assert state.alive == [] and state.over and state.outcome == "all_dead"


def ruled_state(d_value: int = 12, coins: int = 4, **rules: str) -> GameState:
    return new_game(PUZZLES, OWNERS, {1: 5, 2: 8, 3: 9, 4: d_value}, coins, 4, rules=RuleOptions(**rules))


def test_illegal_actions_are_named():
    state = make_state(coins=0)
    assert illegal_reason(state, "A", Action.verify(1)) == "no_coins"  # own puzzle: legal, but costs a coin
    assert (
        illegal_reason(ruled_state(coins=0, own_verify="illegal"), "A", Action.verify(1))
        == "verify_own_puzzle"
    )
    assert illegal_reason(state, "A", Action.verify(4)) == "no_coins"
    assert illegal_reason(state, "A", Action.verify(9)) == "bad_target"
    assert illegal_reason(state, "A", Action.volunteer({1: "Q1-A"})) == "incomplete_password"
    assert illegal_reason(state, "A", Action.volunteer(originals() | {4: "Q4-Z"})) == "missing_capsule"
    assert illegal_reason(state, "A", Action.volunteer(originals())) is None
    assert illegal_reason(state, "A", P) is None


def test_round_report_text_mentions_verifications_volunteers_and_deaths():
    state = make_state(d_value=13)
    report = resolve_round(
        state,
        {"A": Action.verify(4), "B": Action.volunteer(originals()), "C": P, "D": P},
        {"A": 12},
        FixedRng(0),
    )
    text = report.text()
    assert "A verified Q4 and disagreed and opened capsule Q4-A" in text
    assert "B submitted" in text and "wrong" in text
    assert "B died (wrong password)" in text


def test_own_puzzle_verification_is_charged_and_changes_no_capsule():
    state = make_state()
    before = [(c.label, list(c.endorsers)) for caps in state.capsules.values() for c in caps]
    assert illegal_reason(state, "B", Action.verify(2)) is None
    report = resolve_round(state, {"A": P, "B": Action.verify(2), "C": P, "D": P}, {"B": 999}, FixedRng(0))
    assert state.coins["B"] == 3
    assert [(c.label, c.endorsers) for caps in state.capsules.values() for c in caps] == before
    (v,) = report.verifications
    assert (v.seat, v.puzzle, v.capsule, v.created, v.already) == ("B", 2, "Q2-B", False, True)
    assert "B verified Q2 and already endorsed capsule Q2-B" in report.text()


def test_own_puzzle_verification_illegal_option():
    state = ruled_state(own_verify="illegal")
    assert illegal_reason(state, "B", Action.verify(2)) == "verify_own_puzzle"
    assert illegal_reason(state, "B", Action.verify(1)) is None


def test_reverifying_an_endorsed_capsule_is_charged_and_marked_already():
    state = make_state()
    resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    state.alive = ["A", "B", "C", "D"]
    report = resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    assert state.coins["A"] == 2 and state.capsules[4][0].endorsers == ["D", "A"]
    assert report.verifications[0].already


def test_lenient_names_resolve_as_the_reference():
    state = make_state(d_value=13)
    resolve_round(
        state, {"A": Action.verify(4), "B": Action.verify(1), "C": P, "D": P}, {"A": 12, "B": 5}, FixedRng(0)
    )
    # Q4 now holds Q4-D (13) and Q4-A (12); Q1-A is endorsed by B.
    assert state.resolve_capsule(4, "Q4-A").label == "Q4-A"  # exact label
    assert state.resolve_capsule(1, "Q1-A+B").label == "Q1-A"  # grown reference label: creator A named
    assert state.resolve_capsule(1, "Q1-B").label == "Q1-A"  # no capsule created by B: first endorsed by B
    assert state.resolve_capsule(4, "Q4-D+A").label == "Q4-D"  # first capsule whose creator is named
    assert state.resolve_capsule(4, "Q4-C") is None
    exact = ruled_state(capsule_names="exact")
    assert exact.resolve_capsule(1, "Q1-A+B") is None and exact.resolve_capsule(1, "Q1-A").label == "Q1-A"


def test_lenient_password_is_legal_and_announced_with_resolved_labels():
    state = make_state()
    resolve_round(state, {"A": Action.verify(4), "B": P, "C": P, "D": P}, {"A": 12}, FixedRng(0))
    state.alive = ["A", "B", "C", "D"]
    named = {1: "Q1-A", 2: "Q2-B", 3: "Q3-C", 4: "Q4-D+A"}
    assert illegal_reason(state, "B", Action.volunteer(named)) is None
    assert (
        illegal_reason(ruled_state(capsule_names="exact"), "B", Action.volunteer(named)) == "missing_capsule"
    )
    report = resolve_round(state, {"A": P, "B": Action.volunteer(named), "C": P, "D": P}, {}, FixedRng(0))
    assert report.password_correct and report.password == originals()


def test_recorded_draws_replace_the_rng():
    calls: list[tuple[str, tuple[str, ...]]] = []

    def draw(kind: str, options) -> str:  # type: ignore[no-untyped-def]
        calls.append((kind, tuple(options)))
        return options[-1]

    state = make_state()
    vol = Action.volunteer(originals())
    report = resolve_round(state, {"A": vol, "B": vol, "C": P, "D": P}, {}, FixedRng(0), draw=draw)
    assert report.chosen_volunteer == "B" and calls == [("volunteer", ("A", "B"))]
    state = make_state()
    report = resolve_round(state, {s: P for s in state.alive}, {}, FixedRng(0), draw=draw)
    assert report.deaths == (("D", NO_VOLUNTEER),) and calls[-1] == ("eliminate", ("A", "B", "C", "D"))
