"""The trust game as a Mesa 3.3 model: one session of independent pairs; one ``step()`` is one round.

Each round every pair still playing moves in two phases: all trustors decide (LLM calls of the phase run
concurrently in ``astep``), then every trustee who received something decides, then ``step()`` resolves
the exchanges. A trustee who received nothing is not asked (r = 0). Random streams are derived per pair
from the model seed (horizon length, trustor, trustee), so a stochastic player's draws never shift another
pair's or the horizon's (common random numbers across agents). The horizon stream derives from the world
seed, the players' streams from the agent seed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import mesa
import numpy as np

from games.trust_game.rules import Stakes
from games.trust_game.types import (
    NOTHING_TO_RETURN,
    ROLES,
    Decision,
    Exchange,
    HistoryMode,
    PairInfo,
    Player,
    Role,
    TrusteeView,
    TrustorView,
)
from trustsim.horizon import Horizon
from trustsim.mesa_base import Agent

_STREAMS = {"horizon": 0, "trustor": 1, "trustee": 2}
_UNUSED = np.random.default_rng(0)
"""Handed to deterministic players (no random draws): creating a generator per player costs more than the
rest of a scripted one-shot exchange."""


def pair_lengths(seed: int, horizon: Horizon, pairs: int) -> list[int]:
    """The rounds each pair of a session with world seed ``seed`` plays (one draw per pair, in pair order)."""
    lengths = stream(seed, 0, "horizon")  # the world's draws, not the agents'
    return [horizon.draw_length(lengths) for _ in range(pairs)]


def stream(seed: int, pair: int, name: str) -> np.random.Generator:
    """One of a pair's independent random streams (the horizon stream is shared by a session's pairs)."""
    return np.random.default_rng([seed, pair, _STREAMS[name]])


class RoleAgent(Agent):
    """One role of one pair: a Mesa agent delegating decisions to its player (the shared Mesa base frees
    finished models)."""

    def __init__(self, model: TrustGameModel, pair: int, role: Role, player: Player) -> None:
        super().__init__(model)
        self.pair = pair
        self.role = role
        self.player = player


@dataclass(slots=True)
class ExchangeRecord:
    """One resolved exchange."""

    round: int
    sent: int
    received: int
    returned: int
    trustor_payoff: int
    trustee_payoff: int
    trustor: Decision
    trustee: Decision


@dataclass(slots=True)
class PairRecord:
    """Everything the tables need about one pair."""

    pair: int
    length: int
    agents: dict[Role, RoleAgent]
    exchanges: list[ExchangeRecord] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return len(self.exchanges) < self.length

    def past(self) -> tuple[Exchange, ...]:
        return tuple(Exchange(x.round, x.sent, x.received, x.returned) for x in self.exchanges)


class TrustGameModel(mesa.Model):
    """One session of the trust game.

    Args:
        seed: the session's world seed (fixes each pair's length).
        agent_seed: the seed of the players' random streams (default: ``seed``).
        players: one (trustor, trustee) player pair per pair of the session.
        stakes: endowments and multiplier.
        horizon: rounds per pair, known or drawn.
        history: what the trustor sees of earlier rounds (``none``, ``own``, ``population``).
        population: (sent, count, mean returned) rows shown with ``history=population``.
        on_exchange: optional callback after each resolved exchange (the job records events there).
        on_decided: optional callback as soon as a pair's decisions of the round are in (progress).
    """

    def __init__(
        self,
        *,
        seed: int,
        agent_seed: int | None = None,
        players: Sequence[tuple[Player, Player]],
        stakes: Stakes,
        horizon: Horizon,
        history: HistoryMode = "own",
        population: tuple[tuple[int, int, float], ...] = (),
        on_exchange: Callable[[PairRecord, ExchangeRecord], None] | None = None,
        on_decided: Callable[[PairRecord], None] | None = None,
    ) -> None:
        super().__init__(seed=seed)
        if history not in ("none", "own", "population"):
            raise ValueError(f"history must be none, own or population, got {history!r}")
        self.seed_value = seed
        self.stakes = stakes
        self.horizon = horizon
        self.history = history
        self.on_exchange = on_exchange
        self.on_decided = on_decided
        self.pairs: list[PairRecord] = []
        self.round = 1
        infos = {
            r: PairInfo(r, stakes, horizon, history, population if history == "population" else ())
            for r in ROLES
        }
        lengths = pair_lengths(seed, horizon, len(players))
        player_seed = seed if agent_seed is None else agent_seed
        for i, (trustor, trustee) in enumerate(players):
            agents: dict[Role, RoleAgent] = {
                "trustor": RoleAgent(self, i, "trustor", trustor),
                "trustee": RoleAgent(self, i, "trustee", trustee),
            }
            for role, agent in agents.items():
                stochastic = agent.player.classifier.get("stochastic", True)
                agent.player.reset(stream(player_seed, i, role) if stochastic else _UNUSED, infos[role])
            self.pairs.append(PairRecord(i, lengths[i], agents))
        self._pending: dict[int, tuple[Decision, Decision]] | None = None
        self.running = any(p.running for p in self.pairs)

    def active(self) -> list[PairRecord]:
        """Pairs that play the current round."""
        return [p for p in self.pairs if p.running]

    def trustor_view(self, pair: PairRecord) -> TrustorView:
        """The trustor's view: past exchanges only with ``history=own``."""
        info = pair.agents["trustor"].player.info
        assert info is not None
        return TrustorView(self.round, pair.past() if self.history == "own" else (), info)

    def trustee_view(self, pair: PairRecord, sent: int) -> TrusteeView:
        """The trustee's view of this round's amount, with its own past exchanges with the trustor."""
        info = pair.agents["trustee"].player.info
        assert info is not None
        return TrusteeView(self.round, sent, self.stakes.received(sent), pair.past(), info)

    def _decided(self, pair: PairRecord) -> None:
        if self.on_decided is not None:
            self.on_decided(pair)

    def _decide_sync(self) -> dict[int, tuple[Decision, Decision]]:
        out = {}
        for pair in self.active():
            d = pair.agents["trustor"].player.send(self.trustor_view(pair))
            sent = d.amount.value
            t = (
                pair.agents["trustee"].player.give_back(self.trustee_view(pair, sent))
                if sent
                else NOTHING_TO_RETURN
            )
            out[pair.pair] = (d, t)
            self._decided(pair)
        return out

    async def _decide_async(self) -> dict[int, tuple[Decision, Decision]]:
        """Every pair's round at once; within a pair the trustee answers the amount its trustor sent, so a
        pair's round is decided as soon as its own two answers are in."""

        async def decide(pair: PairRecord) -> tuple[Decision, Decision]:
            d = await pair.agents["trustor"].player.asend(self.trustor_view(pair))
            sent = d.amount.value
            t = (
                await pair.agents["trustee"].player.agive_back(self.trustee_view(pair, sent))
                if sent
                else NOTHING_TO_RETURN
            )
            self._decided(pair)
            return d, t

        pairs = self.active()
        decided = await asyncio.gather(*(decide(p) for p in pairs))
        return {p.pair: dt for p, dt in zip(pairs, decided, strict=True)}

    def step(self) -> None:
        """Play one round: decisions gathered by ``astep`` (or synchronously here), then resolved."""
        decisions = self._pending if self._pending is not None else self._decide_sync()
        self._pending = None
        self.resolve(decisions)

    async def astep(self) -> None:
        """Play one round, awaiting asynchronous (LLM) players; each phase's calls run concurrently."""
        self._pending = await self._decide_async()
        self.step()

    def resolve(self, decisions: dict[int, tuple[Decision, Decision]]) -> None:
        """Apply the rules to every active pair's decisions (invalid amounts already resolved as 0)."""
        if not self.running:
            raise RuntimeError("the session is over")
        for pair in self.active():
            trustor, trustee = decisions[pair.pair]
            sent = trustor.amount.value
            returned = trustee.amount.value if sent else 0
            pay_tr, pay_te = self.stakes.payoffs(sent, returned)
            rec = ExchangeRecord(
                self.round, sent, self.stakes.received(sent), returned, pay_tr, pay_te, trustor, trustee
            )
            pair.exchanges.append(rec)
            if self.on_exchange is not None:
                self.on_exchange(pair, rec)
        self.round += 1
        self.running = any(p.running for p in self.pairs)

    @property
    def is_async(self) -> bool:
        """True when a player makes real asynchronous calls (an LLM)."""
        return any(a.player.is_async for p in self.pairs for a in p.agents.values())

    def play(self) -> list[PairRecord]:
        """Play the whole session synchronously (scripted players only)."""
        if self.is_async:
            raise RuntimeError("this session has an LLM player; use `await model.aplay()`")
        while self.running:
            self.step()
        return self.pairs

    async def aplay(self) -> list[PairRecord]:
        """Play the whole session, awaiting asynchronous players."""
        while self.running:
            await self.astep()
        return self.pairs

    def release(self) -> None:
        """Drop the agents and the callback once the records are taken: breaks the model ↔ agent ↔ runner
        reference cycles, so a finished session is freed at once rather than at the next garbage collection
        (a job's peak memory then stays at one session)."""
        self.on_exchange = None
        self.on_decided = None
        self.remove_all_agents()
        for pair in self.pairs:
            pair.agents.clear()


__all__ = ["ROLES", "ExchangeRecord", "PairRecord", "RoleAgent", "TrustGameModel", "stream"]
