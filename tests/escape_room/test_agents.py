"""Offline escape-room agents: generic checks on every policy (Axelrod's TestPlayer style) and behaviour."""

from __future__ import annotations

import asyncio
import pickle

import numpy as np
import pandas as pd
import pytest

from agents.escape_room.base import EscapeRoomPolicy, Services
from agents.escape_room.bayes import BayesAgent
from agents.escape_room.partner import ScriptedPartner
from agents.escape_room.scripted import AlwaysVerify, Consensus, NeverVerify, RandomPolicy
from games.escape_room.model import EscapeRoomModel
from tests.escape_room.helpers import make_options, start_all

POLICIES = [AlwaysVerify, NeverVerify, Consensus, RandomPolicy, BayesAgent]


def play_session(
    policy_cls: type[EscapeRoomPolicy], schedule: str, seed: int = 0, memory: str = "transcript", **params
) -> list[list[tuple[str, int, str]]]:
    """Play one session; return per game the list of (seat, round, resolved action)."""
    options = make_options(schedule, memory=memory)
    d_correct = options.d_correct
    policies: dict[str, EscapeRoomPolicy] = {s: policy_cls(memory=memory, **params) for s in "ABC"}
    policies["D"] = ScriptedPartner()
    start_all(policies, seed)
    games = []
    for g in range(1, len(d_correct) + 1):
        if memory == "none":
            for s in "ABC":
                policies[s].forget()
        rec = asyncio.run(
            EscapeRoomModel(
                seed=seed * 1000 + g, game=g, options=options, policies=policies, partner_puzzle=4
            ).play()
        )
        games.append([(d.seat, d.round, d.resolved.describe()) for d in rec.decisions])
    return games


def versus_test(policy_cls, schedule: str, expected_first_round: dict[str, str], seed: int = 0, **params):
    """One-line behaviour checks: the resolved actions of A, B, C in round 1 of game 1."""
    first = {
        seat: action
        for seat, rnd, action in play_session(policy_cls, schedule, seed, **params)[0]
        if rnd == 1 and seat != "D"
    }
    for seat, prefix in expected_first_round.items():
        assert first[seat].startswith(prefix), (seat, first[seat])


# -- generic checks on every policy ------------------------------------------------------------------------
@pytest.mark.parametrize("policy_cls", POLICIES)
def test_seeded_reproducibility(policy_cls):
    assert play_session(policy_cls, "TTFT", seed=3) == play_session(policy_cls, "TTFT", seed=3)


@pytest.mark.parametrize("policy_cls", POLICIES)
def test_pickling_round_trip(policy_cls):
    policy = policy_cls()
    policy.start_session("A", np.random.default_rng(0), Services())
    clone = pickle.loads(pickle.dumps(policy))
    assert type(clone) is policy_cls and clone.seat == "A"


@pytest.mark.parametrize("policy_cls", POLICIES)
def test_has_name_and_classifier(policy_cls):
    assert policy_cls.name and isinstance(policy_cls.classifier, dict)
    assert {"stochastic", "uses_llm", "memory"} <= set(policy_cls.classifier)


@pytest.mark.parametrize("policy_cls", POLICIES)
def test_only_legal_actions(policy_cls):
    for game in play_session(policy_cls, "TFTFT", seed=7):
        assert game  # someone decided every game


# -- behaviour ----------------------------------------------------------------------------------------------
def test_always_verify_verifies_first():
    versus_test(AlwaysVerify, "T", {"A": "Verify", "B": "Verify", "C": "Verify"})


def test_never_verify_volunteers_at_once():
    versus_test(NeverVerify, "T", {"A": "Volunteer", "B": "Volunteer", "C": "Volunteer"})
    games = play_session(NeverVerify, "TF")
    assert len({rnd for _, rnd, _ in games[0]}) == 1  # D right: escape in round 1


def test_consensus_verifies_first_unendorsed_slot():
    versus_test(Consensus, "T", {"A": "Verify: Q2", "B": "Verify: Q1", "C": "Verify: Q1"})


def test_random_respects_weights():
    versus_test(
        RandomPolicy, "T", {"A": "Pass", "B": "Pass", "C": "Pass"}, p_pass=1.0, p_verify=0.0, p_volunteer=0.0
    )


def test_bayes_memoryless_prior_verifies():
    versus_test(BayesAgent, "T", {"A": "Verify", "B": "Verify", "C": "Verify"})


def test_bayes_forget_resets_beliefs():
    agent = BayesAgent()
    agent.start_session("A", np.random.default_rng(0), Services())
    agent._add("D", 5, 0)
    assert agent.reliability("D") > 0.8
    assert agent._stated_reliability("D") > 0.8
    agent.forget()
    assert agent.reliability("D") == 0.5 and agent._stated_reliability("D") == 0.5


def test_bayes_decisions_state_what_its_confidence_and_trusted_capsules_say():
    """``decide`` inlines the trusted capsule and confidence on its hot path: they equal ``_trusted`` and
    ``confidence`` on every decision of a session, and the password is the trusted capsules'."""
    checked = 0

    class Checked(BayesAgent):
        def decide(self, obs):  # type: ignore[no-untyped-def]
            nonlocal checked
            decision = super().decide(obs)
            trusted = self._trusted(obs)
            assert decision.confidence == self.confidence(obs, trusted)
            assert decision.trusted == {k: c.label for k, c in trusted.items()}
            if decision.action.kind == "volunteer":
                assert decision.action.password == decision.trusted
            checked += 1
            return decision

    play_session(Checked, "TTFFTTFTFT", seed=5)
    assert checked > 30


def _volume(run_dir) -> pd.DataFrame:
    return pd.read_csv(run_dir / "games.csv")


def test_bayes_forms_trust_and_a_strike_breaks_it(run_job_dir):
    _, anchor = run_job_dir(["+experiment=anchor", "runs=6", "agent=bayes"], "anchor")
    _, smooth = run_job_dir(["+experiment=smooth", "runs=6", "agent=bayes"], "smooth")
    _, strike = run_job_dir(["+experiment=mid2strike", "runs=6", "agent=bayes"], "strike")
    anchor_vol = _volume(anchor).verifications.mean()
    smooth_g = _volume(smooth)
    smooth_late = smooth_g[smooth_g.game >= 4].verifications.mean()
    assert smooth_late < 0.25 * anchor_vol  # trust formed: far below the memoryless anchor
    s = _volume(strike)
    before = s[s.game == 3].verifications.mean()
    after = s[s.game.isin([6, 7])].verifications.mean()
    assert after > before + 0.5  # the strike (games 4–5) raises verification again
    share = s[s.game >= 6].partner_verifications.sum() / s[s.game >= 6].verifications.sum()
    assert share > 0.5  # and aims it at the partner
