"""The symmetric benchmark: a policy that is a best response when every seat under test plays it.

The ``team`` variant values a seat's actions against teammates who follow the ``bayes`` agent's reference
rule (a level-1 benchmark: a best response to a fixed rule, which credits passing while the teammates take
the risks). Here the teammates play what the seat would play: starting from the reference rule (level 0),
level ``k`` is every seat's best response (the exact-belief model of :mod:`analysis.yardstick.model`) to
teammates playing level ``k − 1``. A level equal to the one before it on every public state either level
reached is a **fixed point**: every seat best-responds to teammates who play it, so the profile is an
equilibrium of the model (in pure moves, per public state). Best responses need not settle: the volunteer's
dilemma of a memoryless start has only a mixed symmetric equilibrium, and the iteration then cycles; a game
whose levels repeat an earlier one (a cycle) or do not settle within ``max_levels`` has no benchmark, and
says so (:class:`FixedPoint`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from analysis.yardstick.beliefs import View
from analysis.yardstick.model import GameTable, Move, RoundState, SeatModel

MAX_LEVELS = 30
MAX_ROUNDS_LEFT = 3
"""The largest game the benchmark is computed for, in rounds left at the decision: with 4 rounds left one
state costs about a second of CPU and none of 192 offline decisions reached a fixed point (docs/yardstick.md)."""


class LevelTable(GameTable):
    """A game whose teammates play the best response of the level below (level 0: the ``team`` table, the
    reference rule)."""

    def __init__(self, owners: dict[int, str], views: dict[str, View], below: GameTable, level: int) -> None:
        super().__init__(owners, views, "team")
        self.below = below
        self.level = level
        self.queried: dict[tuple[str, RoundState], Move] = {}  # the level below's moves this level used

    def teammate_moves(self, state: RoundState, seat: str) -> list[tuple[Move, float]]:
        if not isinstance(self.below, LevelTable):  # level 1: the reference rule
            return self.below.teammate_moves(state, seat)
        move = self.queried.get((seat, state))
        if move is None:
            move = self.queried[seat, state] = self.below.seat(seat).best_move(state)
        return [(move, 1.0)]

    def seat(self, seat: str) -> SeatModel:
        model = self._seats.get(seat)
        if model is None:
            model = self._seats[seat] = LevelSeatModel(self, seat)
        return model

    def policy(self) -> dict[tuple[str, RoundState], Move]:
        """This level's best move of every seat at every public state its models solved."""
        return {(s, state): m._best[state] for s, m in self._seats.items() for state in m._best}


class LevelSeatModel(SeatModel):
    """A seat whose teammates' moves depend on the whole public state (the rounds left and who is alive
    included), so its teammates' joint moves are cached per state."""

    def plans_key(self, state: RoundState) -> tuple[object, ...]:
        return tuple(state)


@dataclass
class FixedPoint:
    """The outcome of the iteration for one game: ``table`` (the fixed point's level, whose seats' values
    are the benchmark) when ``converged``; else why not."""

    converged: bool
    levels: int  # best-response levels computed
    table: GameTable | None
    reason: str = ""  # "" | "cycle of period N" | "no fixed point within N levels"


def fixed_point(
    owners: dict[int, str],
    views: dict[str, View],
    decisions: Iterable[tuple[str, RoundState]],
    max_levels: int = MAX_LEVELS,
) -> FixedPoint:
    """Iterate best responses from the reference rule until a level repeats the one below it on every
    public state the levels reached from ``decisions`` (seat, state at its decision); a repeat of an older
    level is a cycle."""
    decisions = list(decisions)
    below: GameTable = GameTable(owners, views, "team")
    history: list[dict[tuple[str, RoundState], Move]] = []
    for level in range(1, max_levels + 1):
        table = LevelTable(owners, views, below, level)
        for seat, state in decisions:
            table.seat(seat).value(state)
        _close(table)
        policy = table.policy()
        if level > 1 and _agrees(policy, table.queried, below):
            return FixedPoint(True, level, table)
        for back, older in enumerate(reversed(history[:-1]), start=2):
            if all(older.get(key, move) == move for key, move in policy.items()) and set(policy) <= set(
                older
            ):
                return FixedPoint(False, level, None, f"cycle of period {back}")
        history.append(policy)
        below = table
    return FixedPoint(False, max_levels, None, f"no fixed point within {max_levels} levels")


def _close(table: LevelTable) -> None:
    """Solve the level at every state its teammates were asked about, until no new state is asked."""
    done: set[tuple[str, RoundState]] = set()
    while len(done) < len(table.queried):
        for key in [k for k in table.queried if k not in done]:
            done.add(key)
            table.seat(key[0]).best_move(key[1])


def _agrees(
    policy: dict[tuple[str, RoundState], Move], queried: dict[tuple[str, RoundState], Move], below: GameTable
) -> bool:
    """Whether this level's best moves equal the level below's wherever either was used: the moves its
    teammates were given, and every state this level solved (the level below is asked there too)."""
    if any(policy[key] != move for key, move in queried.items()):
        return False
    return all(below.seat(seat).best_move(state) == move for (seat, state), move in policy.items())


class SymmetricGame:
    """One game's symmetric benchmark, state by state: the fixed point reached from a round's state (every
    live seat under test deciding there), the seats' models in it, or why there is none."""

    def __init__(
        self,
        owners: dict[int, str],
        views: dict[str, View],
        max_levels: int = MAX_LEVELS,
        max_rounds_left: int = MAX_ROUNDS_LEFT,
    ) -> None:
        self.owners = dict(owners)
        self.views = dict(views)
        self.max_levels = max_levels
        self.max_rounds_left = max_rounds_left
        self.outcomes: dict[RoundState, FixedPoint] = {}

    def seat_for(self, seat: str, state: RoundState) -> SeatModel | str:
        if state.rounds_left > self.max_rounds_left:
            return f"not computed (more than {self.max_rounds_left} rounds left)"
        out = self.outcomes.get(state)
        if out is None:
            deciding = [(s, state) for s in sorted(self.views) if s in state.alive]
            out = self.outcomes[state] = fixed_point(self.owners, self.views, deciding, self.max_levels)
        if out.table is None:
            return f"no fixed point ({out.reason})"
        return out.table.seat(seat)
