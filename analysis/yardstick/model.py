"""The yardstick's reference model (``v2``): the expected score of each legal action of one seat under test,
given only what it could observe, with its teammates playing a stated policy.

A model-based yardstick, not the exact optimum of the game. One game, from one seat's point of view:

- **Worlds.** The truth of the four original capsules (:mod:`analysis.yardstick.evidence`). Each seat holds
  a :data:`~analysis.yardstick.beliefs.View` of them at the start of the game (the exact posterior
  predictive of its session, own capsule right) and conditions it on what the game shows.
- **Public state** (:class:`RoundState`): rounds left, seats alive, the coins of A, B, C, the originals whose
  truth a verification made public, and the failed passwords. Every seat sees it.
- **Teammates** (the other live seats under test) play the policy of the ``variant``; the scripted partner
  always passes:

  - ``team`` (default): the **reference rule** of the ``bayes`` agent applied to each teammate's exact
    beliefs: verify the unverified puzzle (not its own) with the largest expected loss ``(1 − p) × coins``
    when that exceeds the coin a verification costs (ties: each such puzzle equally likely), else volunteer
    with the best password;
  - ``self_reliant``: teammates pass, like the partner (the seat counts on nobody).

- **One elimination rule for every action**, the game's: verifications resolve first; then, if anyone
  volunteered, one volunteer drawn uniformly submits the password (right: every live seat escapes; wrong:
  the volunteer dies); if nobody volunteered, one live seat, the partner included, is eliminated uniformly.
  A seat that passes or verifies faces the same elimination; a pass can be worth its wait when teammates
  verify (the truth becomes public for free) or volunteer (they take the password's risk).
- Every volunteer names the best password: for each puzzle a capsule known to be right, else the original
  (a seat trusts its own). It is right when every original unverified at the start of the round is right.
- After this round the seat plays its **best response** to its teammates' policy (a dynamic programme over
  public states, cached per state); after the last round the game ends with score 0. Two shortcuts keep it
  fast and change no value: the round before the last is summed in closed form (the seat then volunteers),
  and the continuation skips moves that are a pass costing a coin (verifying a certain puzzle, or one a
  teammate surely verifies now).

Every value is an **expected score in coins**: the coins the seat keeps if the team escapes with it alive,
else 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from analysis.yardstick.beliefs import View
from analysis.yardstick.evidence import PUZZLES, WORLDS, Fact, bit, own_right

MODEL_VERSION = "v2"
VARIANTS = ("team", "self_reliant")
TESTED = ("A", "B", "C")
PARTNER = "D"
EPS = 1e-9
"""Values closer than this count as a tie (a tied action has regret 0)."""
VERIFY_COST = 1.0
ALL = 15  # the world mask of all four originals

PASS = "pass"
VOLUNTEER = "volunteer"
WRONG = "volunteer_wrong"  # a password naming a capsule known to be wrong (or no capsule): certainly wrong
Move = str | int
"""``pass``, ``volunteer``, ``volunteer_wrong``, or the puzzle (1–4) a verification targets."""


class RoundState(NamedTuple):
    """The public state at the start of a round."""

    rounds_left: int  # including this one
    alive: frozenset[str]  # seats alive, the partner included
    coins: tuple[int, int, int]  # coins of A, B, C (0 once dead)
    verified: int  # world mask: originals whose truth a verification made public
    truth: int  # their truth (bits within ``verified``)
    failed: frozenset[int] = frozenset()  # failed passwords: masks of unverified originals, not all right

    def facts(self) -> list[Fact]:
        """The state's evidence about this game's originals: the verdicts, then the failed passwords."""
        out = [Fact(bit(k), bool(self.truth & bit(k))) for k in PUZZLES if self.verified & bit(k)]
        return out + [Fact(need, False) for need in sorted(self.failed)]


def simplify(failed: Iterable[int], verified: int, truth: int) -> frozenset[int]:
    """Failed passwords as they still constrain the unverified originals: one that named an original shown
    wrong is explained (dropped); originals shown right leave it; one implied by another is dropped."""
    out: set[int] = set()
    for need in failed:
        if need & verified & ~truth:
            continue
        need &= ~verified
        if need:
            out.add(need)
    if len(out) > 1:
        out = {n for n in out if not any(m != n and m & n == m for m in out)}
    return frozenset(out)


def condition(view: View, own: int, facts: Sequence[Fact]) -> View:
    """A seat's view given facts: its own original right unless a verdict said otherwise; a fact the view
    gives probability 0 (it contradicts the seat's own answer or earlier facts) is ignored."""
    own_bit = bit(own)
    if own_right(own, facts):
        weights = list(view)
    else:  # a verifier showed its own capsule wrong: move the mass to the worlds where it is
        weights = [view[w | own_bit] if not w & own_bit else 0.0 for w in WORLDS]
    for fact in facts:
        need = fact.need
        if fact.all_right:
            kept = [p if w & need == need else 0.0 for w, p in enumerate(weights)]
        else:
            kept = [p if w & need != need else 0.0 for w, p in enumerate(weights)]
        if sum(kept) > 0:
            weights = kept
    total = sum(weights)
    return tuple(p / total for p in weights)


def reference_rule(probs: dict[int, float], coins: int) -> list[tuple[Move, float]]:
    """The ``bayes`` agent's decision rule on beliefs ``probs`` (P(right) of each unverified original that is
    not the seat's own): verify the largest expected loss ``(1 − p) × coins`` if it exceeds the coin (ties
    equally likely), else volunteer."""
    losses = {k: (1.0 - round(p, 12)) * coins for k, p in probs.items() if round(p, 12) < 1.0}
    worst = max(losses.values(), default=0.0)
    if coins > 0 and worst > VERIFY_COST:
        targets = sorted(k for k, loss in losses.items() if loss == worst)
        return [(k, 1.0 / len(targets)) for k in targets]
    return [(VOLUNTEER, 1.0)]


class GameTable:
    """What the models of one game's seats share (``owners``: puzzle → seat; ``views``: each seat under test's
    view at the start of the game): every seat's conditioned view and each teammate's move per public state,
    and one :class:`SeatModel` per seat."""

    def __init__(self, owners: dict[int, str], views: dict[str, View], variant: str = "team") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown model variant {variant!r} (choose from {', '.join(VARIANTS)})")
        self.owners = dict(owners)
        self.own_puzzle = {s: k for k, s in owners.items()}
        self.views = dict(views)
        self.variant = variant
        self._conditioned: dict[tuple[str, int, int, frozenset[int]], View] = {}
        self._all_right: dict[tuple[str, int, int, frozenset[int]], list[float]] = {}
        self._moves: dict[tuple[int, int, int, int, frozenset[int]], list[tuple[Move, float]]] = {}
        self._seats: dict[str, SeatModel] = {}

    def seat(self, seat: str) -> SeatModel:
        """The decision problem of ``seat`` (a seat under test)."""
        model = self._seats.get(seat)
        if model is None:
            model = self._seats[seat] = SeatModel(self, seat)
        return model

    def seat_for(self, seat: str, state: RoundState) -> SeatModel | str:
        """The model that scores ``seat``'s decision in ``state``: :meth:`seat` (the symmetric benchmark's
        table answers per decision, or why it has none)."""
        return self.seat(seat)

    def view(self, state: RoundState, seat: str) -> View:
        """``seat``'s view of this game's originals in ``state`` (:func:`condition` on the state's facts)."""
        key = (seat, state.verified, state.truth, state.failed)
        out = self._conditioned.get(key)
        if out is None:
            out = self._conditioned[key] = self._condition(seat, state)
        return out

    def all_right(self, state: RoundState, seat: str) -> list[float]:
        """``seat``'s P(every original in ``need`` is right), indexed by the mask ``need``, in ``state``."""
        key = (seat, state.verified, state.truth, state.failed)
        out = self._all_right.get(key)
        if out is None:
            out = list(self.view(state, seat))
            for b in (1, 2, 4, 8):  # sum each world into every mask it contains
                for need in WORLDS:
                    if not need & b:
                        out[need] += out[need | b]
            self._all_right[key] = out
        return out

    def _condition(self, seat: str, state: RoundState) -> View:
        """:func:`condition`, on a fast path when the view allows every fact at once (then no fact is ignored
        and their order does not matter)."""
        own_bit = bit(self.own_puzzle[seat])
        verified, truth = state.verified, state.truth
        view = self.views[seat]
        if verified & own_bit and not truth & own_bit:  # a verifier showed its own original wrong
            view = tuple(view[w | own_bit] if not w & own_bit else 0.0 for w in WORLDS)
        allowed = [p if w & verified == truth else 0.0 for w, p in enumerate(view)]
        for need in state.failed:
            allowed = [0.0 if w & need == need else p for w, p in enumerate(allowed)]
        total = sum(allowed)
        if total > 0:
            return tuple(p / total for p in allowed)
        return condition(self.views[seat], self.own_puzzle[seat], state.facts())

    def teammate_moves(self, state: RoundState, seat: str) -> list[tuple[Move, float]]:
        """The mixed move of the live seat under test ``seat`` in ``state`` under the variant's policy."""
        index = TESTED.index(seat)
        key = (index, state.coins[index], state.verified, state.truth, state.failed)  # what the rule reads
        out = self._moves.get(key)
        if out is None:
            if self.variant == "self_reliant":
                out = [(PASS, 1.0)]
            else:
                right = self.all_right(state, seat)
                own = self.own_puzzle[seat]
                unverified = [k for k in PUZZLES if k != own and not state.verified & bit(k)]
                out = reference_rule({k: right[bit(k)] for k in unverified}, state.coins[index])
            self._moves[key] = out
        return out


class Plan(NamedTuple):
    """The teammates' part of a round: its probability, who volunteers, every seat's coins after their
    verifications, the originals those reveal."""

    p: float
    volunteers: tuple[str, ...]
    coins: tuple[int, int, int]
    reveal: int


class SeatModel:
    """One seat's decision problem in one game (build it with :meth:`GameTable.seat`). Values are cached per
    public state."""

    def __init__(self, table: GameTable, seat: str) -> None:
        self.table = table
        self.seat = seat
        self.owners = table.owners
        self.own = table.own_puzzle[seat]
        self._index = TESTED.index(seat)
        self._values: dict[RoundState, float] = {}
        self._best: dict[RoundState, Move] = {}
        self._plans: dict[tuple[object, ...], list[Plan]] = {}
        self._splits: dict[tuple[int, int, frozenset[int], int, bool], dict[tuple[int, bool], float]] = {}

    # -- beliefs ---------------------------------------------------------------------------------------------
    def view(self, state: RoundState) -> View:
        """This seat's view of the game's originals in ``state``."""
        return self.table.view(state, self.seat)

    def prob(self, state: RoundState, puzzle: int) -> float:
        """P(the best capsule this seat can name for ``puzzle`` is right)."""
        if puzzle == self.own or state.verified & bit(puzzle):
            return 1.0
        return self.p_all(state, bit(puzzle))

    def p_password(self, state: RoundState) -> float:
        """P(the best password is right) for this seat: every unverified original right."""
        return self.p_all(state, ALL & ~state.verified)

    def p_all(self, state: RoundState, need: int) -> float:
        """P(every original in the mask ``need`` is right) for this seat."""
        return self.table.all_right(state, self.seat)[need]

    # -- teammates -------------------------------------------------------------------------------------------
    def plans_key(self, state: RoundState) -> tuple[object, ...]:
        """What the teammates' moves depend on (the cache key of :meth:`plans`): not the rounds left."""
        return (state.alive, state.coins, state.verified, state.truth, state.failed)

    def plans(self, state: RoundState) -> list[Plan]:
        """Every joint move of the live teammates, as a :class:`Plan` with its probability (cached)."""
        key = self.plans_key(state)
        out = self._plans.get(key)
        if out is None:
            out = [Plan(1.0, (), state.coins, 0)]
            for i, seat in enumerate(TESTED):
                if seat == self.seat or seat not in state.alive:
                    continue
                joint = []
                for move, q in self.table.teammate_moves(state, seat):
                    if move == VOLUNTEER:
                        joint += [Plan(t.p * q, (*t.volunteers, seat), t.coins, t.reveal) for t in out]
                    elif move == PASS:
                        joint += [Plan(t.p * q, t.volunteers, t.coins, t.reveal) for t in out]
                    else:
                        reveal = bit(move) if isinstance(move, int) and self.owners[move] != seat else 0
                        for t in out:
                            coins = list(t.coins)
                            coins[i] -= 1
                            joint.append(
                                Plan(t.p * q, t.volunteers, (coins[0], coins[1], coins[2]), t.reveal | reveal)
                            )
                out = joint
            self._plans[key] = out
        return out

    def p_teammate_volunteers(self, state: RoundState) -> float:
        """P(at least one teammate volunteers this round)."""
        return sum(plan.p for plan in self.plans(state) if plan.volunteers)

    # -- the dynamic programme -------------------------------------------------------------------------------
    def moves(self, state: RoundState, plans: list[Plan] | None = None) -> list[Move]:
        """The moves worth considering after this round: pass, volunteer, and verifying an unverified puzzle
        that is not the seat's own and that no teammate surely verifies now. The others are a pass that costs
        a coin (a certain puzzle, or a truth a teammate reveals anyway), never better than passing."""
        if state.coins[self._index] == 0:
            return [VOLUNTEER, PASS]
        covered = ALL
        for plan in plans or self.plans(state):
            covered &= plan.reveal
        open_ = ALL & ~state.verified & ~covered & ~bit(self.own)
        return [VOLUNTEER, PASS, *(k for k in PUZZLES if open_ & bit(k))]

    def value(self, state: RoundState) -> float:
        """The seat's optimal expected score from ``state``."""
        out = self._values.get(state)
        if out is None:
            coins = state.coins[self._index]
            p_password = self.p_password(state)
            if coins == 0 or state.rounds_left == 1 or p_password >= 1.0 - 1e-12:
                # Volunteering is best: nothing to win; or the last round (waiting is worth at most the same
                # escape, and only if a teammate volunteers); or the escape now keeps every coin.
                best: Move = VOLUNTEER
                out = coins * p_password
            else:
                plans = self.plans(state)
                moves = self.moves(state, plans)
                if state.rounds_left == 2:
                    values = self._before_last(state, moves, plans)
                else:
                    values = {m: self.q(state, m, plans) for m in moves}
                out = max(values.values())
                best = next(m for m, v in values.items() if v >= out - EPS)
            self._values[state], self._best[state] = out, best
        return out

    def best_move(self, state: RoundState) -> Move:
        """The move the seat's best response takes in ``state`` (the first best of :meth:`moves`)."""
        self.value(state)
        return self._best[state]

    def split(self, state: RoundState, reveal: int, password: bool) -> dict[tuple[int, bool], float]:
        """This seat's probability of each (truth of the originals ``reveal`` verifies, best password right);
        without ``password`` the second item is always False (nobody submits one)."""
        key = (state.verified, state.truth, state.failed, reveal, password)
        out = self._splits.get(key)
        if out is None:
            need = ALL & ~state.verified if password else ALL + 1  # an impossible mask: never "right"
            out = {}
            for w, p in enumerate(self.view(state)):
                if p > 0:
                    k = (w & reveal, w & need == need)
                    out[k] = out.get(k, 0.0) + p
            self._splits[key] = out
        return out

    def q(self, state: RoundState, move: Move, plans: list[Plan] | None = None) -> float:
        """Expected score of ``move`` now, then the best response (``plans``: :meth:`plans` of the state)."""
        plans = plans or self.plans(state)
        if state.rounds_left == 2:
            return self._before_last(state, [move], plans)[move]
        total = 0.0
        volunteering = move in (VOLUNTEER, WRONG)
        verify = isinstance(move, int)
        for plan in plans:
            volunteers = (*plan.volunteers, self.seat) if volunteering else plan.volunteers
            reveal = plan.reveal | (
                bit(move) if isinstance(move, int) and self.owners[move] != self.seat else 0
            )
            coins = list(plan.coins)
            if verify:
                coins[self._index] -= 1
            total += plan.p * self._resolve(state, move, volunteers, coins, reveal & ~state.verified)
        return total

    def _resolve(
        self, state: RoundState, move: Move, volunteers: tuple[str, ...], coins: list[int], reveal: int
    ) -> float:
        """Expected score of the round's outcome (after these volunteers, coins and revealed originals), then
        the best response."""
        mine = coins[self._index]
        if state.rounds_left <= 1:  # the last round: only an escape now counts
            if not volunteers:
                return 0.0
            right = sum(p for (_, ok), p in self.split(state, reveal, True).items() if ok)
            return (
                mine
                * right
                * sum(not (v == self.seat and move == WRONG) for v in volunteers)
                / len(volunteers)
            )
        value, next_state, seat = self.value, self.next_state, self.seat
        failed = state.failed | {ALL & ~state.verified}  # after a failed best password
        others = [s for s in sorted(state.alive) if s != seat]
        total = 0.0
        for (seen, right), p in self.split(state, reveal, bool(volunteers)).items():
            verified, truth = state.verified | reveal, state.truth | seen
            if volunteers:
                share = p / len(volunteers)
                for v in volunteers:
                    if right and not (v == seat and move == WRONG):
                        total += share * mine
                    elif v != seat:
                        total += share * value(next_state(state, v, coins, verified, truth, failed))
            else:
                share = p / len(state.alive)
                for victim in others:
                    total += share * value(next_state(state, victim, coins, verified, truth, state.failed))
        return total

    def _before_last(self, state: RoundState, moves: Sequence[Move], plans: list[Plan]) -> dict[Move, float]:
        """:meth:`q` of each of ``moves`` in the round before the last, in closed form. In the last round the
        seat volunteers (:meth:`value`: its coins × P(the best password is right)); averaged over this round's
        outcomes, that probability is ``later`` = P(every original still unverified after this round is
        right). With ``now`` = P(this round's password is right) (``now`` ≤ ``later``), a teammate's password
        escapes with ``now`` and, when it fails, leaves the seat the last round's escape with ``later − now``:
        ``later`` in all; the seat's own password escapes with ``now``, and if it fails the seat is dead. If
        nobody volunteers the seat survives the elimination with ``(alive − 1) / alive``."""
        right = self.table.all_right(state, self.seat)
        unverified = ALL & ~state.verified
        now = right[unverified]
        survive = (len(state.alive) - 1) / len(state.alive)
        out = {}
        for move in moves:
            mine = state.coins[self._index]
            volunteering = move in (VOLUNTEER, WRONG)
            own = now if move == VOLUNTEER else 0.0
            reveal = 0
            if isinstance(move, int):
                mine -= 1
                reveal = bit(move) if self.owners[move] != self.seat else 0
            total = 0.0
            for plan in plans:
                later = right[unverified & ~(plan.reveal | reveal)]
                teammates = len(plan.volunteers)
                if volunteering:
                    total += plan.p * mine * (teammates * later + own) / (teammates + 1)
                elif teammates:
                    total += plan.p * mine * later
                else:
                    total += plan.p * mine * later * survive
            out[move] = total
        return out

    @staticmethod
    def next_state(
        state: RoundState, dead: str, coins: list[int], verified: int, truth: int, failed: frozenset[int]
    ) -> RoundState:
        """The public state of the next round: ``dead`` died; the coins, verdicts and failures after this one."""
        kept = list(coins)
        if dead != PARTNER:
            kept[TESTED.index(dead)] = 0
        if failed and (failed is not state.failed or verified != state.verified):
            failed = simplify(failed, verified, truth)
        return RoundState(
            state.rounds_left - 1, state.alive - {dead}, (kept[0], kept[1], kept[2]), verified, truth, failed
        )

    # -- one decision ----------------------------------------------------------------------------------------
    def action_values(self, state: RoundState, targets: Sequence[int]) -> dict[str, float]:
        """Expected score of every legal action: ``pass``, ``volunteer`` (the best password) and ``verify:k``
        for each puzzle in ``targets`` (those the rules let the seat verify) when it has a coin."""
        out = {PASS: self.q(state, PASS), VOLUNTEER: self.q(state, VOLUNTEER)}
        if state.coins[self._index] > 0:
            for k in targets:
                out[f"verify:{k}"] = self.q(state, k)
        return out

    def ev_volunteer(self, state: RoundState, *, wrong: bool = False) -> float:
        """Expected score of volunteering with the best password, or (``wrong``) with one known to be wrong."""
        return self.q(state, WRONG if wrong else VOLUNTEER)

    def death_risk(self, state: RoundState, move: Move) -> float:
        """P(the seat dies this round) when it makes ``move``."""
        wrong = 1.0 if move == WRONG else 1.0 - self.p_password(state)
        total = 0.0
        for plan in self.plans(state):
            if move in (VOLUNTEER, WRONG):
                total += plan.p * wrong / (len(plan.volunteers) + 1)
            elif not plan.volunteers:
                total += plan.p / len(state.alive)
        return total


def best_action(values: dict[str, float]) -> str:
    """The first best action in a fixed order: volunteer, pass, then verifications by puzzle."""
    top = max(values.values())
    order = [VOLUNTEER, PASS, *sorted(k for k in values if k.startswith("verify:"))]
    return next(a for a in order if values[a] >= top - EPS)
