"""The generative model: sample true hidden states, outcomes, costs and observations.

Used by the runner (with one seeded generator per (scenario, history) so agents taking the same actions see
the same feedback) and, independently of the solver's recursion, by the Monte Carlo check of Q*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from games.reliance.model import CompiledScenario
from games.reliance.solver import Node, Solution


@dataclass(frozen=True)
class StepResult:
    """What happened at one stage."""

    obs: str
    success: bool | None
    cost: float
    next_state: int


def draw(cum: np.ndarray, rng: np.random.Generator) -> int:
    """Inverse-CDF draw from an (unnormalised) cumulative weight vector."""
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(cum) - 1)


def sample_initial(comp: CompiledScenario, rng: np.random.Generator) -> int:
    """Draw the true hidden state from the prior."""
    return draw(np.cumsum(comp.prior), rng)


def step(comp: CompiledScenario, stage: int, action: str, state: int, rng: np.random.Generator) -> StepResult:
    """Play ``action`` at 1-based ``stage`` from true hidden ``state``."""
    ca = comp.stages[stage - 1][action]
    a = comp.scenario.actions[action]
    loss = comp.scenario.stages[stage - 1].loss
    o, success, newp = ca.sample(state, len(comp.pending), rng)
    j, _ = comp.split(state)
    j2 = draw(np.cumsum(ca.kernel[j]), rng)
    cost = a.fee
    if success is not None:
        cost += a.success_fee if success else loss * a.loss_share
    return StepResult(ca.obs[o], success, cost, comp.state(j2, newp))


Policy = Callable[[Node], str]


def first_optimal(node: Node) -> str:
    """The oracle's tie-break: the first optimal action in the admissible order."""
    return node.optimal[0]


def rollout(
    sol: Solution, node: Node, first: str, rng: np.random.Generator, policy: Policy = first_optimal
) -> float:
    """Total realised cost from ``node`` taking ``first``, then following ``policy``.

    The true state is drawn from the node's posterior, so the mean over rollouts estimates Q*(node, first).
    """
    comp = sol.compiled
    b = node.belief
    state = draw(np.cumsum(b), rng)
    total = 0.0
    current: Node | None = node
    action = first
    while current is not None:
        res = step(comp, current.stage, action, state, rng)
        total += res.cost
        state = res.next_state
        current = sol.child(current, action, res.obs)
        if current is not None:
            action = policy(current)
    return total
