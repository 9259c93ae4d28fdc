"""``v1`` scoring (superseded; kept only for the side-by-side comparison in docs/yardstick.md, ``--model v1``):
Beta beliefs by the ``bayes`` agent's heuristic, other seats not modelled, the verifier spared the round's
elimination in the ``team`` variant."""

from __future__ import annotations

from typing import Any

from analysis.yardstick.score import PUZZLES, Scored, cluster_of, decision_row
from analysis.yardstick.traces import PARTNER, Capsule, GameTrace, RoundTrace, RunTrace, resolve_name
from analysis.yardstick.v1 import montecarlo
from analysis.yardstick.v1.beliefs import Beliefs
from analysis.yardstick.v1.model import (
    State,
    action_values,
    death_risk_pass,
    death_risk_volunteer,
    ev_volunteer,
)

MODEL_VERSION = "v1"


class _Seat:
    """What one seat can compute at the start of a round: each puzzle's status, its state under the model.

    A puzzle is *certain* when the seat owns it or a verifier vouched for one of its capsules, else
    *uncertain*: its only capsule is the owner's, right with the owner's reliability at the start of the game
    (``start``), conditioned on this game's failed passwords by the model.
    """

    def __init__(
        self,
        seat: str,
        start: dict[str, float],
        game: GameTrace,
        rnd: RoundTrace,
        failed: list[dict[int, str]],
    ) -> None:
        self.seat = seat
        self.game = game
        self.rnd = rnd
        probs: dict[int, float] = {}
        for k, caps in rnd.capsules.items():
            owner = game.owners[k]
            if owner == seat or any(_vouched(c, owner) for c in caps):
                probs[k] = 1.0
            else:
                probs[k] = start.get(owner, 0.5)
        constraints = [s for s in (self._constraint(f, probs) for f in failed) if s is not None]
        self.state = State.of(
            coins=max(int(rnd.coins.get(seat, 0)), 0),
            probs=probs,
            alive=max(len(rnd.alive), 1),
            rounds_left=max(game.max_rounds - rnd.number + 1, 1),
            failed=constraints,
        )

    def _status(self, k: int, capsule: Capsule) -> str:
        """``right``, ``wrong`` or ``uncertain`` for a capsule of puzzle k, as this seat sees it now."""
        caps = self.rnd.capsules[k]
        owner = self.game.owners[k]
        if owner == self.seat:
            return "right" if self.seat in capsule.endorsers else "wrong"
        if _vouched(capsule, owner):
            return "right"
        if any(_vouched(c, owner) for c in caps if c is not capsule):
            return "wrong"
        return "uncertain"

    def _constraint(self, password: dict[int, str], probs: dict[int, float]) -> list[int] | None:
        """The uncertain puzzles a failed password named (not all right), or None when it named a capsule now
        known to be wrong (which explains the failure)."""
        out = []
        for k, creator in password.items():
            capsule = next((c for c in self.rnd.capsules.get(k, []) if c.creator == creator), None)
            if capsule is None:
                return None
            status = self._status(k, capsule)
            if status == "wrong":
                return None
            if status == "uncertain" and probs.get(k, 1.0) < 1.0:
                out.append(k)
        return out

    def named(self, names: dict[int, str] | None, lenient: bool) -> tuple[list[int], bool]:
        """(the uncertain puzzles a password names, whether it names a capsule known to be wrong, misses a
        puzzle or names nothing)."""
        uncertain: list[int] = []
        for k in sorted(self.rnd.capsules):
            name = (names or {}).get(k)
            capsule = resolve_name(self.rnd.capsules[k], name, lenient) if name else None
            if capsule is None:
                return uncertain, True
            status = self._status(k, capsule)
            if status == "wrong":
                return uncertain, True
            if status == "uncertain":
                uncertain.append(k)
        return uncertain, False


def _vouched(capsule: Capsule, owner: str) -> bool:
    """A capsule someone other than the puzzle's owner opened or endorsed (verifiers are taken as exact)."""
    return any(e != owner for e in capsule.endorsers)


def score_game(
    run: RunTrace, game: GameTrace, beliefs: dict[str, Beliefs], cluster: str, variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows for every decision of the tested seats in one game; updates ``beliefs`` with what each seat heard."""
    rows: list[dict[str, Any]] = []
    lenient = run.capsule_names != "exact"
    failed: list[dict[int, str]] = []
    start: dict[str, dict[str, float]] = {}
    for seat, b in beliefs.items():
        b.start_game()
        start[seat] = {s: b.reliability(s) for s in game.owners.values() if s != seat}
    for rnd in game.rounds:
        for choice in rnd.choices:
            seat = choice.seat
            if seat == PARTNER or seat not in beliefs:
                continue
            view = _Seat(seat, start[seat], game, rnd, failed)
            state = view.state
            own = next((k for k, s in game.owners.items() if s == seat), None)
            targets = [k for k in PUZZLES if k in rnd.capsules and (run.own_verify != "illegal" or k != own)]
            values = action_values(state, targets, variant)
            if choice.action == "volunteer":
                named, wrong = view.named(choice.names, lenient)
                chosen = ev_volunteer(state, named, wrong=wrong)
                risk_volunteer = death_risk_volunteer(state, named, wrong=wrong)
            else:
                key = f"verify:{choice.target}" if choice.action == "verify" else "pass"
                chosen = values.get(key, values["pass"])
                risk_volunteer = death_risk_volunteer(state)
            scored = Scored(
                coins=state.coins,
                alive=state.alive,
                rounds_left=state.rounds_left,
                probs={k: state.prob(k) for k in PUZZLES if k in rnd.capsules},
                values=values,
                chosen=chosen,
                death_risk_pass=death_risk_pass(state),
                death_risk_volunteer=risk_volunteer,
                p_teammate_volunteers=None,
                simulate=_simulator(state, variant),
            )
            rows.append(
                decision_row(
                    run,
                    game,
                    rnd,
                    choice,
                    cluster=cluster,
                    variant=variant,
                    version=MODEL_VERSION,
                    failed_passwords=len(failed),
                    scored=scored,
                )
            )
        if rnd.password is not None and rnd.correct is False:
            failed.append(dict(rnd.password))
        for seat, b in beliefs.items():
            if seat in rnd.alive:  # a seat hears a round's announcement only if it was alive at its start
                b.observe(rnd, game.owners)
    for b in beliefs.values():
        b.end_game(game)
    return rows


def _simulator(state: State, variant: str) -> Any:
    return lambda action, n, rng: montecarlo.simulate(state, action, n=n, rng=rng, variant=variant)


def score_run(
    run: RunTrace, prior: tuple[float, float] = (1.0, 1.0), variant: str = "team"
) -> list[dict[str, Any]]:
    """Rows for every decision of the run's tested seats (beliefs carried across a session's games unless
    the memory is ``none``)."""
    rows: list[dict[str, Any]] = []
    sessions: dict[int, dict[str, Beliefs]] = {}
    for game in sorted(run.games, key=lambda g: (g.session, g.game)):
        seats = sorted({s for s in game.owners.values() if s != PARTNER})
        beliefs = sessions.setdefault(game.session, {s: Beliefs(s, prior) for s in seats})
        if run.memory == "none":
            for b in beliefs.values():
                b.forget()
        rows.extend(score_game(run, game, beliefs, cluster_of(run, game), variant))
    return rows
