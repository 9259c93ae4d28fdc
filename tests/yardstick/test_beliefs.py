"""The exact posterior of the partners' reliabilities: against a brute-force enumeration of every latent
right/wrong state of a small session, and the cases the old heuristic got wrong."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from analysis.yardstick.beliefs import Posterior
from analysis.yardstick.evidence import Fact, GameEvidence, bit, heard, mask_of
from analysis.yardstick.traces import Capsule, GameTrace, RoundTrace, Verification

SEATS = ("A", "B", "C", "D")


def log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def brute_force(
    seat: str, games: list[tuple[dict[int, str], list[Fact]]], nxt: dict[int, str], prior: tuple[float, float]
) -> tuple[list[float], dict[str, float]]:
    """(predictive joint of the next game's originals, posterior mean reliability per partner) by summing
    over every truth assignment of every original of every game (the seat's own taken as right unless a fact
    says it was wrong), weighted by the Beta–Bernoulli marginal likelihood."""
    a0, b0 = prior
    partners = [s for s in SEATS if s != seat]
    weights: list[float] = []
    counts: list[dict[str, tuple[int, int]]] = []
    for worlds in itertools.product(range(16), repeat=len(games)):
        tally = {s: [0, 0] for s in partners}
        ok = True
        for world, (owners, facts) in zip(worlds, games, strict=True):
            own = next(k for k, s in owners.items() if s == seat)
            own_wrong = Fact(bit(own), False) in facts
            if bool(world & bit(own)) == own_wrong or not all(f.holds(world) for f in facts):
                ok = False
                break
            for k, s in owners.items():
                if s != seat:
                    tally[s][0 if world & bit(k) else 1] += 1
        if ok:
            weights.append(
                math.exp(sum(log_beta(a0 + r, b0 + w) - log_beta(a0, b0) for r, w in tally.values()))
            )
            counts.append({s: (r, w) for s, (r, w) in tally.items()})
    total = sum(weights)
    own = next(k for k, s in nxt.items() if s == seat)
    joint = [0.0] * 16
    for world in range(16):
        if not world & bit(own):
            continue
        for weight, tally in zip(weights, counts, strict=True):
            p = weight / total
            for k, s in nxt.items():
                if s != seat:
                    r, w = tally[s]
                    mean = (a0 + r) / (a0 + b0 + r + w)
                    p *= mean if world & bit(k) else 1 - mean
            joint[world] += p
    means = {
        s: sum(
            w / total * (a0 + c[s][0]) / (a0 + b0 + sum(c[s])) for w, c in zip(weights, counts, strict=True)
        )
        for s in partners
    }
    return joint, means


def random_game(rng: np.random.Generator, seat: str) -> tuple[dict[int, str], list[Fact]]:
    """Random owners and facts drawn from a random true world: verdicts, failed and escaped passwords."""
    order = list(rng.permutation(SEATS))
    owners = {k: str(s) for k, s in zip((1, 2, 3, 4), order, strict=True)}
    own = next(k for k, s in owners.items() if s == seat)
    world = int(rng.integers(16)) | bit(own)
    facts = []
    if rng.random() < 0.15:  # a verifier showed the seat's own capsule wrong
        world &= ~bit(own)
        facts.append(Fact(bit(own), False))
    for k in (1, 2, 3, 4):
        if k != own and rng.random() < 0.25:
            facts.append(Fact(bit(k), bool(world & bit(k))))
    for _ in range(int(rng.integers(0, 3))):
        need = mask_of(k for k in (1, 2, 3, 4) if rng.random() < 0.6) or bit(own)
        facts.append(Fact(need, (world & need) == need))
    return owners, facts


@pytest.mark.parametrize("prior", [(1.0, 1.0), (2.0, 0.5)])
def test_posterior_matches_brute_force_on_random_sessions(prior: tuple[float, float]) -> None:
    rng = np.random.default_rng(17)
    for _ in range(40):
        seat = str(rng.choice(list(SEATS)))
        games = [random_game(rng, seat) for _ in range(int(rng.integers(1, 4)))]
        nxt = random_game(rng, seat)[0]
        post = Posterior(seat, prior)
        for owners, facts in games:
            post.add_game(owners, facts)
        joint, means = brute_force(seat, games, nxt, prior)
        assert post.view(nxt) == pytest.approx(joint, abs=1e-12)
        for s, m in means.items():
            assert post.reliability(s) == pytest.approx(m, abs=1e-12)


OWNERS = {1: "A", 2: "B", 3: "C", 4: "D"}


def test_conjugate_evidence_is_beta_counting() -> None:
    post = Posterior("A")
    post.add_game(
        OWNERS, [Fact(bit(4), False), Fact(mask_of([2, 3]), True)]
    )  # D wrong; B, C right (an escape)
    post.add_game(OWNERS, [Fact(bit(4), True)])
    assert post.reliability("B") == pytest.approx(2 / 3)
    assert post.reliability("D") == pytest.approx(2 / 4)
    assert post.reliability("C") == pytest.approx(2 / 3)


def test_a_failure_a_wrong_capsule_explains_changes_nothing() -> None:
    """The issue's case: A showed Q4-D wrong, then a password naming the originals of B, C and D failed."""
    explained = Posterior("A")
    explained.add_game(OWNERS, [Fact(bit(4), False), Fact(mask_of([1, 2, 3, 4]), False)])
    verdict_only = Posterior("A")
    verdict_only.add_game(OWNERS, [Fact(bit(4), False)])
    for s in ("B", "C", "D"):
        assert explained.reliability(s) == pytest.approx(verdict_only.reliability(s), abs=1e-15)
    assert explained.reliability("B") == pytest.approx(0.5)


def test_a_repeated_failure_adds_nothing_and_the_blame_is_shared() -> None:
    once, twice = Posterior("A"), Posterior("A")
    failed = Fact(mask_of([2, 3, 4]), False)
    once.add_game(OWNERS, [failed])
    twice.add_game(OWNERS, [failed, failed])
    for s in ("B", "C", "D"):
        assert once.reliability(s) == pytest.approx(twice.reliability(s), abs=1e-15)
    # three suspects at the prior: 7 equally likely assignments agree; B right in 3 (posterior mean 2/3 each),
    # wrong in 4 (1/3): E[theta_B] = (3 * 2/3 + 4 * 1/3) / 7 = 10/21, not the heuristic's 1 / (2 + 4/7) = 7/18
    assert once.reliability("B") == pytest.approx(10 / 21)


def test_own_capsule_shown_wrong_is_not_blamed_on_others() -> None:
    """A failed password naming A's and B's originals: A blames B, unless a verifier showed A's wrong."""
    blamed, excused = Posterior("A"), Posterior("A")
    blamed.add_game(OWNERS, [Fact(mask_of([1, 2]), False)])
    excused.add_game(OWNERS, [Fact(bit(1), False), Fact(mask_of([1, 2]), False)])
    assert blamed.reliability("B") == pytest.approx(1 / 3)
    assert excused.reliability("B") == pytest.approx(1 / 2)


def test_memoryless_forget_and_bad_prior() -> None:
    post = Posterior("B")
    post.add_game(OWNERS, [Fact(bit(1), False)])
    post.forget()
    assert post.reliability("A") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="alpha and beta"):
        Posterior("A", (0.0, 1.0))


def _round(number: int, alive: str, **kw: object) -> RoundTrace:
    caps = {k: [Capsule(f"Q{k}-{s}", s, [s])] for k, s in OWNERS.items()}
    return RoundTrace(number=number, alive=list(alive), coins=dict.fromkeys("ABCD", 4), capsules=caps, **kw)  # type: ignore[arg-type]


def test_what_a_seat_heard() -> None:
    """Verdicts (not an owner's check of its own puzzle), failed passwords, only rounds it was alive for."""
    game = GameTrace(session=0, game=1, d_correct=False, owners=OWNERS, max_rounds=4)
    game.rounds = [
        _round(
            1,
            "ABCD",
            verifications=[Verification("A", 4, "A", True), Verification("C", 3, "C", False)],
            password={1: "A", 2: "B", 3: "C", 4: "D"},
            correct=False,
        ),
        _round(
            2,
            "ABD",
            verifications=[Verification("B", 2, "B", False)],
            password={1: "A", 2: "B", 3: "C", 4: "A"},
            correct=True,
        ),
    ]
    a, c = heard(game, "A"), heard(game, "C")
    assert a.verdicts == {4: False} and c.verdicts == {4: False}
    assert a.passwords == [(15, False), (7, True)]
    assert c.passwords == [(15, False)]  # C died in round 1
    assert isinstance(a, GameEvidence) and a.facts()[0] == Fact(bit(4), False)
