"""Memory modes of the LLM agent: what crosses games and how it is bounded."""

from __future__ import annotations

import itertools

import pytest

from agents.escape_room.llm_memory import (
    LedgerMemory,
    Memory,
    ReflectionMemory,
    TranscriptMemory,
    TranscriptReflectionMemory,
    make_memory,
)
from games.escape_room.types import (
    Action,
    CapsuleView,
    Decision,
    GameSummary,
    Observation,
    Puzzle,
    RoundReport,
    VerificationReport,
)


def obs(game: int, seat: str = "A") -> Observation:
    caps = {k: (CapsuleView(f"Q{k}-{'ABCD'[k - 1]}", ("ABCD"[k - 1],)),) for k in range(1, 5)}
    return Observation(
        seat=seat,
        game=game,
        round=1,
        max_rounds=4,
        puzzle=Puzzle(1, "What is 2 + 3?", 5),
        coins=dict.fromkeys("ABCD", 4),
        alive=tuple("ABCD"),
        capsules=caps,
        owners={1: "A", 2: "B", 3: "C", 4: "D"},
        history=(),
    )


def report(game: int, conflict: bool, volunteer_ok: bool | None) -> RoundReport:
    verifs = (VerificationReport("A", 4, "Q4-A", created=True),) if conflict else ()
    return RoundReport(
        game=game,
        round=1,
        actions={"A": "Verify: Q4", "B": "Pass", "C": "Volunteer: Q1-A, Q2-B, Q3-C, Q4-D", "D": "Pass"},
        verifications=verifs,
        volunteers=("C",) if volunteer_ok is not None else (),
        chosen_volunteer="C" if volunteer_ok is not None else None,
        password={1: "Q1-A", 2: "Q2-B", 3: "Q3-C", 4: "Q4-D"} if volunteer_ok is not None else None,
        password_correct=volunteer_ok,
        deaths=(("C", "wrong_password"),) if volunteer_ok is False else (),
        escaped=bool(volunteer_ok),
    )


def summary(game: int, reports: tuple[RoundReport, ...], escaped: bool) -> GameSummary:
    return GameSummary(
        game=game,
        escaped=escaped,
        rounds=len(reports),
        survivors=("A", "B", "D"),
        coins=dict.fromkeys("ABCD", 3),
        scores=dict.fromkeys("ABCD", 3 if escaped else 0),
        own_score=3 if escaped else 0,
        seat="A",
        reports=reports,
    )


def play_game(mem: Memory, game: int, conflict: bool = True, reasoning: str = "check D") -> None:
    o = obs(game)
    mem.start_game(o)
    mem.record_decision(o, Decision(Action.verify(4), reasoning=reasoning))
    r = report(game, conflict, volunteer_ok=not conflict)
    mem.record_round(r)
    mem.end_game(summary(game, (r,), escaped=not conflict))


def test_none_carries_nothing() -> None:
    mem = make_memory("none")
    play_game(mem, 1)
    mem.start_game(obs(2))
    assert mem.context() == ""


def test_transcript_carries_own_events_and_is_fixed_within_a_game() -> None:
    mem = make_memory("transcript")
    play_game(mem, 1)
    mem.start_game(obs(2))
    ctx = mem.context()
    assert "G1 R1 you chose Verify: Q4. Your reasoning: check D" in ctx
    assert "A verified Q4 and disagreed and opened capsule Q4-A" in ctx and "Game 1 ended" in ctx
    mem.record_round(report(2, True, None))
    assert mem.context() == ctx  # this game's events come from the observation, not the memory


def test_transcript_truncates_to_newest_events_and_chars() -> None:
    mem = TranscriptMemory(max_events=7, max_chars=100_000)
    for g in range(1, 6):
        play_game(mem, g)
    mem.start_game(obs(6))
    lines = mem.context().splitlines()
    assert len(lines) == 7 and "Game 5 ended" in lines[-1]
    assert not any("Game 3:" in line for line in lines)
    small = TranscriptMemory(max_events=100, max_chars=300)
    for g in range(1, 6):
        play_game(small, g, reasoning="r" * 80)
    small.start_game(obs(6))
    assert 0 < len(small.context()) <= 300 and "Game 5 ended" in small.context()


def test_reflection_replaces_and_is_word_capped() -> None:
    mem = ReflectionMemory(max_words=5)
    play_game(mem, 1)
    mem.set_reflection("one two three four five six seven")
    mem.start_game(obs(2))
    assert mem.context().endswith("one two three four five")
    mem.set_reflection("fresh")
    mem.start_game(obs(3))
    assert "fresh" in mem.context() and "one" not in mem.context()


def test_transcript_reflection_keeps_the_transcript_then_the_reflection() -> None:
    mem = make_memory("transcript_reflection", max_words=3)
    assert isinstance(mem, TranscriptReflectionMemory) and mem.reflects
    play_game(mem, 1)
    mem.start_game(obs(2))
    assert "Game 1 ended" in mem.context() and "reflection" not in mem.context()  # none written yet
    mem.set_reflection("verify D first always")
    mem.start_game(obs(3))
    transcript, reflection = mem.context().split("\n\n")
    assert (
        "Game 1 ended" in transcript and reflection == "Your reflection after the last game: verify D first"
    )
    assert not make_memory("transcript").reflects and make_memory("reflection").reflects


def test_ledger_summarises_each_game_compactly() -> None:
    mem = LedgerMemory(max_games=2)
    play_game(mem, 1, conflict=True)
    play_game(mem, 2, conflict=False)
    play_game(mem, 3, conflict=True)
    mem.start_game(obs(4))
    lines = mem.context().splitlines()
    assert len(lines) == 2 and lines[0].startswith("Game 2: escaped")
    assert "Conflicts: Q4 new capsule(s) Q4-A" in lines[1]
    assert "Failed volunteers: C" in lines[1] and "You verified: Q4" in lines[1]
    assert "reasoning" not in mem.context()  # simulator-written, not the model's words


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="memory mode must be one of"):
        make_memory("everything")


def test_block_trim_keeps_the_prefix_stable_and_within_limits() -> None:
    mem = TranscriptMemory(max_events=20, max_chars=100_000, trim="block")
    contexts = []
    for g in range(1, 12):
        play_game(mem, g)
        mem.start_game(obs(g + 1))
        contexts.append(mem.context())
    assert all(len(c.splitlines()) <= 20 for c in contexts)
    # Most game-to-game steps only append: the previous context is a prefix of the next one.
    appends = sum(b.startswith(a) for a, b in itertools.pairwise(contexts))
    assert appends >= 6
    exact = TranscriptMemory(max_events=20, max_chars=100_000, trim="exact")
    for g in range(1, 12):
        play_game(exact, g)
    exact.start_game(obs(12))
    assert len(exact.context().splitlines()) == 20  # the reference keeps exactly the newest that fit
