"""Exact Bayes-optimal solution of a compiled scenario over every reachable information state.

Nodes are information states (stage, commitment lock, exact posterior over hidden states); histories with
the same posterior share a node, so the tree is stored as a DAG. The forward pass enumerates every
reachable node (after optimal and sub-optimal actions alike, pruning only zero-probability observations);
the backward pass computes

    Q*_t(b, a) = b · cost_a + Σ_o P(o | b, a) · V*_{t+1}(b_{a,o}),   V*_t(b) = min_a Q*_t(b, a),   V*_{T+1} = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from games.reliance.model import CompiledScenario, compile_scenario
from games.reliance.spec import Scenario

OPT_TOL = 1e-9
PROB_EPS = 1e-12
ZERO_BENEFIT = 1e-8
KEY_DIGITS = 12


@dataclass
class Node:
    """One decision node (information state)."""

    id: int
    stage: int  # 1-based
    lock: int
    belief: np.ndarray
    actions: tuple[str, ...]
    imm: np.ndarray  # immediate expected cost per action
    q: np.ndarray = field(default_factory=lambda: np.zeros(0))
    v: float = 0.0
    # per action: list of (observation key, probability, child id or None when the episode ends)
    branches: list[list[tuple[str, float, int | None]]] = field(default_factory=list)

    def qof(self, action: str) -> float:
        return float(self.q[self.actions.index(action)])

    @property
    def optimal(self) -> tuple[str, ...]:
        return tuple(a for a, q in zip(self.actions, self.q, strict=True) if q <= self.v + OPT_TOL)

    @property
    def myopic(self) -> tuple[str, ...]:
        lo = float(self.imm.min())
        return tuple(a for a, c in zip(self.actions, self.imm, strict=True) if c <= lo + OPT_TOL)

    @property
    def value_range(self) -> float:
        return float(self.q.max() - self.v)

    def regret(self, action: str) -> float:
        """Normalised regret in [0, 1]; NaN where every action ties."""
        rng = self.value_range
        if rng <= OPT_TOL:
            return float("nan")
        return (self.qof(action) - self.v) / rng

    def branch(self, action: str) -> list[tuple[str, float, int | None]]:
        return self.branches[self.actions.index(action)]


@dataclass
class Solution:
    """All reachable nodes of a scenario with their values."""

    compiled: CompiledScenario
    nodes: list[Node]
    locks: list[frozenset[str] | None]

    @property
    def scenario(self) -> Scenario:
        return self.compiled.scenario

    @property
    def root(self) -> Node:
        return self.nodes[0]

    @property
    def n_branches(self) -> int:
        return sum(len(b) for n in self.nodes for b in n.branches)

    def child(self, node: Node, action: str, obs: str) -> Node | None:
        for key, _, child in node.branch(action):
            if key == obs:
                return None if child is None else self.nodes[child]
        raise KeyError(f"observation {obs!r} is impossible after {action!r} at node {node.id}")

    def test_benefit(self, node: Node, action: str) -> float | None:
        """B(a) = Q*(skip) − [Q*(a) − fee(a)], with the fee relative to the counterpart; None if no counterpart."""
        a = self.scenario.actions[action]
        if a.counterpart is None or a.counterpart not in node.actions:
            return None
        skip = self.scenario.actions[a.counterpart]
        return node.qof(a.counterpart) - (node.qof(action) - (a.fee - skip.fee))

    def success_prob(self, node: Node, action: str) -> float | None:
        """Exact P(job success | posterior, action); None for actions without a job."""
        ca = self.compiled.stages[node.stage - 1][action]
        return None if ca.success is None else float(node.belief @ ca.success)

    def best_fixed_sequence(self) -> tuple[float, tuple[str, ...]]:
        """The best open-loop action sequence (ignores all feedback) and its expected cost."""
        comp = self.compiled
        frontier: list[tuple[np.ndarray, frozenset[str] | None, float, tuple[str, ...]]] = [
            (comp.prior, None, 0.0, ())
        ]
        for t, stage in enumerate(comp.scenario.stages):
            nxt = []
            for b, lock, cost, seq in frontier:
                for name in stage.actions:
                    if (name not in lock) if lock is not None else comp.scenario.actions[name].locked_only:
                        continue
                    ca = comp.stages[t][name]
                    a = comp.scenario.actions[name]
                    new_lock = frozenset(a.lock) if a.lock is not None else lock
                    nxt.append((b @ ca.M.sum(axis=0), new_lock, cost + float(b @ ca.cost), (*seq, name)))
            frontier = nxt
        best = min(frontier, key=lambda x: x[2])
        return best[2], best[3]

    def adaptation_value(self) -> float:
        """Best fixed sequence cost minus V* at the root (≥ 0; > 0 where adapting to feedback pays)."""
        return self.best_fixed_sequence()[0] - self.root.v


def solve(scn: Scenario | CompiledScenario) -> Solution:
    """Solve every reachable node of a scenario exactly."""
    comp = scn if isinstance(scn, CompiledScenario) else compile_scenario(scn)
    stages = comp.scenario.stages
    T = len(stages)
    locks: list[frozenset[str] | None] = [None]
    lock_ids: dict[frozenset[str] | None, int] = {None: 0}
    nodes: list[Node] = []

    def admissible(t: int, lock: int) -> tuple[str, ...]:
        ls = locks[lock]
        acts = comp.scenario.actions
        return tuple(a for a in stages[t].actions if (a in ls if ls is not None else not acts[a].locked_only))

    def new_node(t: int, lock: int, belief: np.ndarray) -> Node:
        acts = admissible(t, lock)
        imm = np.array([float(belief @ comp.stages[t][a].cost) for a in acts])
        node = Node(len(nodes), t + 1, lock, belief, acts, imm)
        node.branches = [[] for _ in acts]
        nodes.append(node)
        return node

    layers: list[list[Node]] = [[new_node(0, 0, comp.prior)]]
    for t in range(T):
        layer = layers[t]
        index: dict[tuple[int, bytes], Node] = {}
        nxt: list[Node] = []
        groups: dict[int, list[Node]] = {}
        for n in layer:
            groups.setdefault(n.lock, []).append(n)
        for lock, members in groups.items():
            B = np.stack([n.belief for n in members])
            for ai, name in enumerate(members[0].actions):
                ca = comp.stages[t][name]
                a = comp.scenario.actions[name]
                if a.lock is not None:
                    key_l = frozenset(a.lock)
                    new_lock = lock_ids.setdefault(key_l, len(locks))
                    if new_lock == len(locks):
                        locks.append(key_l)
                else:
                    new_lock = lock
                P = np.einsum("ns,osk->nok", B, ca.M)
                probs = P.sum(axis=2)
                for row, n in enumerate(members):
                    br = n.branches[ai]
                    for o, key in enumerate(ca.obs):
                        p = float(probs[row, o])
                        if p <= PROB_EPS:
                            continue
                        if t == T - 1:
                            br.append((key, p, None))
                            continue
                        post = P[row, o] / p
                        k = (new_lock, np.round(post, KEY_DIGITS).tobytes())
                        child = index.get(k)
                        if child is None:
                            child = new_node(t + 1, new_lock, post)
                            index[k] = child
                            nxt.append(child)
                        br.append((key, p, child.id))
        if t < T - 1:
            layers.append(nxt)
    for layer in reversed(layers):
        for n in layer:
            q = n.imm.copy()
            for ai, br in enumerate(n.branches):
                q[ai] += sum(p * nodes[c].v for _, p, c in br if c is not None)
            n.q = q
            n.v = float(q.min())
    return Solution(comp, nodes, locks)
