"""Axelrod-style shared test base for arena players, and ``versus_test``."""

from __future__ import annotations

import pickle
from typing import Any, ClassVar

from agents.arena.base import ArenaPlayer
from agents.arena.scripted import RandomPlayer
from games.arena.model import ArenaModel
from games.arena.rules import Payoffs
from trustsim.horizon import Horizon


def play(
    a: ArenaPlayer, b: ArenaPlayer, rounds: int, seed: int = 0, noise: float = 0.0, **kw: Any
) -> tuple[str, str]:
    """Executed moves of both players as strings, e.g. ('CCD', 'CDD')."""
    m = ArenaModel(seed=seed, players=(a, b), payoffs=Payoffs(), horizon=Horizon(rounds), noise=noise, **kw)
    rec = m.play()
    return "".join(rec.moves("A")), "".join(rec.moves("B"))


def versus_test(player: ArenaPlayer, opponent: ArenaPlayer, expected: str, seed: int = 0) -> None:
    """Assert the player's executed moves against the opponent over ``len(expected)`` rounds."""
    got, _ = play(player, opponent, len(expected), seed)
    assert got == expected, f"{player!r} vs {opponent!r}: expected {expected}, got {got}"


class PlayerTest:
    """Generic checks every scripted player passes; subclasses set ``player`` and ``expected_classifier``."""

    player: ClassVar[type[ArenaPlayer]]
    params: ClassVar[dict[str, Any]] = {}
    expected_classifier: ClassVar[dict[str, Any]] = {}
    expected_name: ClassVar[str] = ""

    def make(self) -> ArenaPlayer:
        return self.player(**self.params)

    def test_name_and_classifier(self) -> None:
        p = self.make()
        assert p.name == self.expected_name
        for key, value in self.expected_classifier.items():
            assert p.classifier[key] == value, key
        assert {"stochastic", "memory_depth", "uses_llm", "states_confidence"} <= set(p.classifier)

    def test_seeded_reproducibility(self) -> None:
        for seed in (0, 1, 7):
            first = play(self.make(), RandomPlayer(0.5), 30, seed)
            assert play(self.make(), RandomPlayer(0.5), 30, seed) == first

    def test_stochastic_flag_is_honest(self) -> None:
        runs = {play(self.make(), RandomPlayer(0.5), 40, seed=0)[0]} | {
            play(self.make(), RandomPlayer(0.5), 40, seed=s)[0] for s in range(1, 6)
        }
        deterministic_given_history = all(
            play(self.make(), opp(), 40, seed=s)[0] == play(self.make(), opp(), 40, seed=s + 100)[0]
            for opp in (lambda: RandomPlayer(1.0), lambda: RandomPlayer(0.0))
            for s in range(3)
        )
        if not self.make().classifier["stochastic"]:
            assert deterministic_given_history
        else:
            assert not deterministic_given_history or len(runs) > 1

    def test_reset_between_matches(self) -> None:
        p = self.make()
        first = play(p, RandomPlayer(0.5), 25, seed=3)
        play(p, RandomPlayer(0.2), 25, seed=9)  # a different match in between
        assert play(p, RandomPlayer(0.5), 25, seed=3) == first

    def test_pickling_mid_match(self) -> None:
        a, b = self.make(), RandomPlayer(0.5)
        m = ArenaModel(seed=5, players=(a, b), payoffs=Payoffs(), horizon=Horizon(30))
        for _ in range(10):
            m.step()
        a_copy = pickle.loads(pickle.dumps(m.seats["A"].player))
        views = m.view("A")
        assert a_copy.decide(views).move == m.seats["A"].player.decide(views).move
