"""Exact Bayes-optimal solution of a compiled scenario over every reachable information state.

Nodes are information states (stage, commitment lock, exact posterior over hidden states); histories with
the same posterior share a node, so the tree is stored as a DAG. The forward pass enumerates every
reachable node (after optimal and sub-optimal actions alike, pruning only zero-probability observations);
the backward pass computes

    Q*_t(b, a) = b · cost_a + Σ_o P(o | b, a) · V*_{t+1}(b_{a,o}),   V*_t(b) = min_a Q*_t(b, a),   V*_{T+1} = 0.

:func:`rollout` estimates Q* by simulation instead, independently of the recursion (a test checks both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from games.reliance.beliefs import CompiledScenario, compile_scenario, draw, step
from games.reliance.rules import Scenario

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
    # per action: (observation keys, probabilities, child ids); child -1 = the episode ends after it
    links: list[tuple[tuple[str, ...], np.ndarray, np.ndarray]] = field(default_factory=list)

    @property
    def branches(self) -> list[list[tuple[str, float, int | None]]]:
        """Per action: (observation key, probability, child id or None when the episode ends)."""
        return [self.branch(a) for a in self.actions]

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
        obs, probs, kids = self.links[self.actions.index(action)]
        return [
            (obs[o], float(probs[o]), None if kids[o] < 0 else int(kids[o]))
            for o in range(len(obs))
            if probs[o] > PROB_EPS
        ]


@dataclass
class Solution:
    """All reachable nodes of a scenario with their values."""

    compiled: CompiledScenario
    nodes: list[Node]
    locks: list[frozenset[str] | None]
    _adaptation: float | None = None

    @property
    def scenario(self) -> Scenario:
        return self.compiled.scenario

    @property
    def root(self) -> Node:
        return self.nodes[0]

    @property
    def n_branches(self) -> int:
        return int(sum(int((p > PROB_EPS).sum()) for n in self.nodes for _, p, _ in n.links))

    def child(self, node: Node, action: str, obs: str) -> Node | None:
        _keys, probs, kids = node.links[node.actions.index(action)]
        ca = self.compiled.stages[node.stage - 1][action]
        o = ca.obs_index.get(obs)
        if o is None or probs[o] <= PROB_EPS:
            raise KeyError(f"observation {obs!r} is impossible after {action!r} at node {node.id}")
        return None if kids[o] < 0 else self.nodes[int(kids[o])]

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
        acts = comp.scenario.actions
        # frontier per lock: (beliefs (n, S), costs (n,), sequences)
        frontier: dict[frozenset[str] | None, tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]] = {
            None: (comp.prior[None, :], np.zeros(1), [()])
        }
        for t, stage in enumerate(comp.scenario.stages):
            nxt: dict[frozenset[str] | None, list[tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]]] = {}
            for lock, (B, costs, seqs) in frontier.items():
                for name in stage.actions:
                    if (name not in lock) if lock is not None else acts[name].locked_only:
                        continue
                    ca = comp.stages[t][name]
                    own = acts[name].lock
                    new_lock = frozenset(own) if own is not None else lock
                    nxt.setdefault(new_lock, []).append(
                        (B @ ca.Msum, costs + B @ ca.cost, [(*s, name) for s in seqs])
                    )
            frontier = {
                k: (
                    np.vstack([x[0] for x in v]),
                    np.concatenate([x[1] for x in v]),
                    [s for x in v for s in x[2]],
                )
                for k, v in nxt.items()
            }
        best_cost, best_seq = np.inf, tuple[str, ...]()
        for _, costs, seqs in frontier.values():
            i = int(np.argmin(costs))
            if costs[i] < best_cost:
                best_cost, best_seq = float(costs[i]), seqs[i]
        return best_cost, best_seq

    def adaptation_value(self) -> float:
        """Best fixed sequence cost minus V* at the root (≥ 0; > 0 where adapting to feedback pays)."""
        if self._adaptation is None:
            self._adaptation = self.best_fixed_sequence()[0] - self.root.v
        return self._adaptation


def solve(scn: Scenario | CompiledScenario) -> Solution:
    """Solve every reachable node of a scenario exactly (forward enumeration, backward induction)."""
    comp = scn if isinstance(scn, CompiledScenario) else compile_scenario(scn)
    stages = comp.scenario.stages
    acts = comp.scenario.actions
    T = len(stages)
    locks: list[frozenset[str] | None] = [None]
    lock_ids: dict[frozenset[str] | None, int] = {None: 0}
    nodes: list[Node] = []
    admissible_cache: dict[tuple[int, int], tuple[str, ...]] = {}

    def admissible(t: int, lock: int) -> tuple[str, ...]:
        key = (t, lock)
        if key not in admissible_cache:
            ls = locks[lock]
            admissible_cache[key] = tuple(
                a for a in stages[t].actions if (a in ls if ls is not None else not acts[a].locked_only)
            )
        return admissible_cache[key]

    def new_node(t: int, lock: int, belief: np.ndarray) -> Node:
        node = Node(len(nodes), t + 1, lock, belief, admissible(t, lock), np.zeros(0))
        nodes.append(node)
        return node

    # groups[t]: (member node ids, action index per member, action name, probs (n, O), children (n, O))
    groups: list[list[tuple[list[Node], int, np.ndarray, np.ndarray]]] = []
    layer = [new_node(0, 0, comp.prior)]
    for t in range(T):
        index: dict[tuple[int, bytes], Node] = {}
        nxt: list[Node] = []
        by_lock: dict[int, list[Node]] = {}
        for n in layer:
            by_lock.setdefault(n.lock, []).append(n)
        layer_groups = []
        for lock, members in by_lock.items():
            B = np.stack([n.belief for n in members])
            names = members[0].actions
            imm = B @ np.stack([comp.stages[t][a].cost for a in names]).T  # (n, A)
            for row, n in enumerate(members):
                n.imm = imm[row]
                n.links = []  # one per action, appended in action order below
            for ai, name in enumerate(names):
                ca = comp.stages[t][name]
                a = acts[name]
                new_lock = lock
                if a.lock is not None:
                    key_l = frozenset(a.lock)
                    if key_l not in lock_ids:
                        lock_ids[key_l] = len(locks)
                        locks.append(key_l)
                    new_lock = lock_ids[key_l]
                P = (B @ ca.M2).reshape(len(members), len(ca.obs), -1)
                probs = P.sum(axis=2)
                kids = np.full(probs.shape, -1, dtype=np.int64)
                if t < T - 1:
                    rows, cols = np.nonzero(probs > PROB_EPS)
                    post = P[rows, cols] / probs[rows, cols, None]
                    rounded = np.round(post, KEY_DIGITS) + 0.0
                    for i, (r, o) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
                        k = (new_lock, rounded[i].tobytes())
                        child = index.get(k)
                        if child is None:
                            child = new_node(t + 1, new_lock, post[i])
                            index[k] = child
                            nxt.append(child)
                        kids[r, o] = child.id
                for row, n in enumerate(members):
                    n.links.append((ca.obs, probs[row], kids[row]))
                layer_groups.append((members, ai, probs, kids))
        groups.append(layer_groups)
        layer = nxt
    values = np.zeros(len(nodes) + 1)  # values[-1] = 0 stands for "episode over"
    for t in range(T - 1, -1, -1):
        touched: dict[int, Node] = {}
        for members, ai, probs, kids in groups[t]:
            cont = (probs * values[kids]).sum(axis=1)
            for row, n in enumerate(members):
                if not len(n.q):
                    n.q = n.imm.copy()
                    touched[n.id] = n
                n.q[ai] += cont[row]
        for n in touched.values():
            n.v = float(n.q.min())
            values[n.id] = n.v
    return Solution(comp, nodes, locks)


# -- Monte Carlo check of Q* (independent of the backward recursion) -----------------------------------
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
