"""One group of two playing the public-goods game: a Mesa model, one step per round."""

from __future__ import annotations

from dataclasses import dataclass, field

import mesa

from public_goods.policy import Choice, Player, View
from public_goods.rules import check_contribution, payoffs
from trustsim.mesa_base import Agent

SEATS = ("A", "B")


@dataclass
class RoundRecord:
    """One round: each seat's choice and payoff."""

    round: int
    choices: dict[str, Choice]
    payoffs: dict[str, float]


@dataclass
class GroupRecord:
    """A finished group."""

    rounds: list[RoundRecord] = field(default_factory=list)


class Seat(Agent):
    """A seat of the group: a Mesa agent deciding through its player."""

    def __init__(self, model: PublicGoodsModel, seat: str, player: Player) -> None:
        super().__init__(model)
        self.seat = seat
        self.player = player


class PublicGoodsModel(mesa.Model):
    """Two seats contribute simultaneously each round; the pot is multiplied and split equally."""

    def __init__(
        self, *, seed: int, players: tuple[Player, Player], rounds: int, endowment: int, multiplier: float
    ) -> None:
        super().__init__(seed=seed)
        self.rounds, self.endowment, self.multiplier = rounds, endowment, multiplier
        self.seats = {seat: Seat(self, seat, p) for seat, p in zip(SEATS, players, strict=True)}
        self.record = GroupRecord()
        self.round = 1

    def _view(self, seat: str) -> View:
        other = "B" if seat == "A" else "A"
        own = tuple(r.choices[seat].contribution for r in self.record.rounds)
        partner = tuple(r.choices[other].contribution for r in self.record.rounds)
        return View(self.round, self.rounds, self.endowment, own, partner)

    def step(self) -> None:
        choices = {seat: a.player.contribute(self._view(seat)) for seat, a in self.seats.items()}
        for choice in choices.values():
            check_contribution(choice.contribution, self.endowment)
        paid = payoffs({s: c.contribution for s, c in choices.items()}, self.endowment, self.multiplier)
        self.record.rounds.append(RoundRecord(self.round, choices, paid))
        self.round += 1
        self.running = self.round <= self.rounds

    def play(self) -> GroupRecord:
        while self.running:
            self.step()
        return self.record
