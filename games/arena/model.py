"""The arena as a Mesa 3.3 model: two players, one ``step()`` is one round of simultaneous moves.

Both players see the same start-of-round history, decide (LLM decisions of a round run concurrently in
``astep``), then the model resolves: invalid answers by the configured rule, noise flips, payoffs.
Random streams are derived from the model seed: horizon, noise, and one per seat (so a stochastic player's
draws never shift the noise or the match length: common random numbers across pairings).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import mesa
import numpy as np

from games.arena.policy import ArenaPlayer
from games.arena.rules import InvalidRule, Move, Payoffs, apply_noise, resolve_invalid
from games.arena.types import Decision, MatchInfo, View
from trustsim.horizon import Horizon
from trustsim.mesa_base import Agent

SEATS = ("A", "B")
_STREAMS = {"horizon": 0, "noise": 1, "A": 2, "B": 3}


def stream(seed: int, name: str) -> np.random.Generator:
    """One of the model's independent random streams."""
    return np.random.default_rng([seed, _STREAMS[name]])


class PlayerAgent(Agent):
    """A seat in the match: a Mesa agent delegating decisions to its player strategy."""

    def __init__(self, model: ArenaModel, seat: str, player: ArenaPlayer) -> None:
        super().__init__(model)
        self.seat = seat
        self.player = player


@dataclass(slots=True)
class RoundRecord:
    """One resolved round."""

    round: int
    decisions: dict[str, Decision]
    intended: dict[str, Move]
    executed: dict[str, Move]
    flipped: dict[str, bool]
    payoffs: dict[str, float]


@dataclass(slots=True)
class MatchRecord:
    """Everything the tables need about one finished match."""

    seed: int
    length: int
    labels: dict[str, str]
    models: dict[str, str]
    rounds: list[RoundRecord] = field(default_factory=list)

    def moves(self, seat: str) -> list[Move]:
        """Executed moves of a seat, in round order."""
        return [r.executed[seat] for r in self.rounds]

    def total(self, seat: str) -> float:
        """Total payoff of a seat."""
        return float(sum(r.payoffs[seat] for r in self.rounds))


class ArenaModel(mesa.Model):
    """One iterated prisoner's dilemma match.

    Args:
        seed: the match seed (fixes the length, the noise draws and the players' random streams).
        players: the two players, seat A first.
        payoffs: the payoff table.
        horizon: announced or unknown horizon.
        noise: probability that an executed move differs from the intended one.
        named: whether each player is told the other's label.
        invalid_rule: how an invalid answer resolves (see :func:`games.arena.rules.resolve_invalid`).
        on_round: optional callback after each resolved round (the job records events there).
    """

    def __init__(
        self,
        *,
        seed: int,
        players: tuple[ArenaPlayer, ArenaPlayer],
        payoffs: Payoffs,
        horizon: Horizon,
        noise: float = 0.0,
        named: bool = True,
        invalid_rule: InvalidRule = "repeat",
        on_round: Callable[[RoundRecord], None] | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise must be in [0, 1], got {noise}")
        self.seed_value = seed
        self.payoffs = payoffs
        self.horizon = horizon
        self.noise = noise
        self.invalid_rule = invalid_rule
        self.on_round = on_round
        self.noise_rng = stream(seed, "noise")
        self.seats = {seat: PlayerAgent(self, seat, p) for seat, p in zip(SEATS, players, strict=True)}
        labels = {seat: a.player.label for seat, a in self.seats.items()}
        for seat, agent in self.seats.items():
            other = labels["B" if seat == "A" else "A"]
            info = MatchInfo(payoffs, horizon, other if named else None, noise, seat)
            agent.player.reset(stream(seed, seat), info)
        self.record = MatchRecord(
            seed,
            horizon.draw_length(stream(seed, "horizon")),
            labels,
            {seat: a.player.model_name for seat, a in self.seats.items()},
        )
        self.history: dict[str, list[Move]] = {"A": [], "B": []}
        self.totals = {"A": 0.0, "B": 0.0}
        self.running = self.record.length > 0

    @property
    def round(self) -> int:
        """The round about to be played (1-based)."""
        return len(self.record.rounds) + 1

    def view(self, seat: str) -> View:
        """What ``seat`` sees at the start of the current round."""
        other = "B" if seat == "A" else "A"
        agent = self.seats[seat]
        assert agent.player.info is not None
        return View(
            self.round,
            tuple(self.history[seat]),
            tuple(self.history[other]),
            self.totals[seat],
            self.totals[other],
            agent.player.info,
        )

    def step(self) -> None:
        """Play one round with synchronous decisions (scripted players)."""
        decisions = {seat: a.player.decide(self.view(seat)) for seat, a in self.seats.items()}
        self.resolve(decisions)

    async def astep(self) -> None:
        """Play one round; both players' (LLM) decisions run concurrently."""
        views = {seat: self.view(seat) for seat in SEATS}
        results = await asyncio.gather(*(self.seats[s].player.adecide(views[s]) for s in SEATS))
        self.resolve(dict(zip(SEATS, results, strict=True)))

    def resolve(self, decisions: dict[str, Decision]) -> RoundRecord:
        """Apply the rules to both decisions: invalid-move rule, noise, payoffs."""
        if not self.running:
            raise RuntimeError("the match is over")
        intended: dict[str, Move] = {}
        for seat in SEATS:
            move = decisions[seat].move
            intended[seat] = (
                move if move is not None else resolve_invalid(self.invalid_rule, self.history[seat])
            )
        executed: dict[str, Move] = {}
        flipped: dict[str, bool] = {}
        for seat in SEATS:  # one noise draw per seat per round, always
            executed[seat], flipped[seat] = apply_noise(intended[seat], self.noise, self.noise_rng)
        pa, pb = self.payoffs.pair(executed["A"], executed["B"])
        rec = RoundRecord(self.round, decisions, intended, executed, flipped, {"A": pa, "B": pb})
        for seat in SEATS:
            self.history[seat].append(executed[seat])
        self.totals["A"] += pa
        self.totals["B"] += pb
        self.record.rounds.append(rec)
        self.running = len(self.record.rounds) < self.record.length
        if self.on_round is not None:
            self.on_round(rec)
        return rec

    @property
    def is_async(self) -> bool:
        """True when a player makes real asynchronous calls (an LLM)."""
        return any(a.player.is_async for a in self.seats.values())

    def play(self) -> MatchRecord:
        """Play the whole match synchronously (scripted players only)."""
        if self.is_async:
            raise RuntimeError("this match has an LLM player; use `await model.aplay()`")
        while self.running:
            self.step()
        return self.record

    async def aplay(self) -> MatchRecord:
        """Play the whole match, awaiting asynchronous players."""
        while self.running:
            await self.astep()
        return self.record
