"""Belief compilation: a :class:`~games.reliance.rules.Scenario` as belief-space matrices, and sampling.

The hidden state is (joint channel modes, pending delayed report). For stage ``t`` and action ``a``:

- ``cost[s]`` is the expected stage cost in hidden state ``s`` (fees plus expected loss),
- ``M[o, s, s']`` = P(observation ``o``, next hidden state ``s'`` | ``s``), including the action's effects
  and the between-stage transitions after stage ``t``,

so a belief ``b`` (row vector) has expected cost ``b @ cost`` and unnormalised posterior ``b @ M[o]``.
The same tables drive the generative sampler (:func:`sample_initial`, :func:`step`: true state, outcome,
observation), which the Mesa model (:mod:`games.reliance.model`) plays with one seeded generator per
(scenario, history), so agents taking the same actions see the same feedback.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from games.reliance.rules import Action, Scenario

NONE_OBS = "nothing observed"


@dataclass
class CompiledAction:
    """The matrices of one action at one stage.

    ``W[b, j, p2, k]`` is the probability, from joint mode ``j``, of the stage's own observation ``b``
    (``base[b]``), the new pending report ``p2`` and job result ``k`` (0 failure, 1 success, 2 no job).
    The full observation adds the revealed pending report ``p`` of the current hidden state:
    ``obs[o]`` with ``o = b * len(reveal) + reveal.index(p)``.
    """

    name: str
    cost: np.ndarray  # (S,)
    success: np.ndarray | None  # (S,) P(job success | s); None for actions without a job
    obs: tuple[str, ...]
    M: np.ndarray  # (O, S, S)
    kernel: np.ndarray  # (J, J) mode transition after the stage
    W: np.ndarray  # (B, J, P, 3)
    reveal: tuple[int, ...]  # pending indices that can be present at this stage
    Msum: np.ndarray = field(init=False)  # (S, S) ignoring the observation
    obs_index: dict[str, int] = field(default_factory=dict)

    M2: np.ndarray = field(init=False)  # (S, O * S): b @ M2 = all b @ M[o]
    _cum: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.Msum = self.M.sum(axis=0)
        n_obs, n_states, _ = self.M.shape
        self.M2 = np.ascontiguousarray(self.M.transpose(1, 0, 2).reshape(n_states, n_obs * n_states))
        self.obs_index = {o: i for i, o in enumerate(self.obs)}

    def sample(self, state: int, n_pending: int, rng: np.random.Generator) -> tuple[int, bool | None, int]:
        """Draw (observation index, job success or None, new pending index) from hidden ``state``."""
        j, p = divmod(state, n_pending)
        if self._cum is None:
            flat_w = self.W.transpose(1, 0, 2, 3).reshape(self.W.shape[1], -1)
            self._cum = np.cumsum(flat_w / flat_w.sum(axis=1, keepdims=True), axis=1)
        cum = self._cum[j]
        flat = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(cum) - 1)
        b, rest = divmod(flat, self.W.shape[2] * 3)
        newp, k = divmod(rest, 3)
        return b * len(self.reveal) + self.reveal.index(p), (None if k == 2 else bool(k)), newp


@dataclass
class CompiledScenario:
    """A scenario in matrix form."""

    scenario: Scenario
    joint: tuple[tuple[str, ...], ...]
    pending: tuple[str, ...]
    prior: np.ndarray  # (S,)
    stages: tuple[dict[str, CompiledAction], ...]
    _indicator: np.ndarray | None = None

    @property
    def n_states(self) -> int:
        return len(self.joint) * len(self.pending)

    def state(self, j: int, p: int) -> int:
        return j * len(self.pending) + p

    def split(self, s: int) -> tuple[int, int]:
        return divmod(s, len(self.pending))

    def marginals(self, belief: np.ndarray) -> dict[str, dict[str, float]]:
        """Posterior P(mode) per channel from a belief over hidden states."""
        if self._indicator is None:
            cols = []
            for i, c in enumerate(self.scenario.channels):
                for m in c.modes:
                    col = np.array([float(j[i] == m) for j in self.joint])
                    cols.append(np.repeat(col, len(self.pending)))
            self._indicator = np.stack(cols, axis=1)
        flat = (belief @ self._indicator).tolist()
        out: dict[str, dict[str, float]] = {}
        k = 0
        for c in self.scenario.channels:
            out[c.name] = dict(zip(c.modes, flat[k : k + len(c.modes)], strict=True))
            k += len(c.modes)
        return out

    def joint_posterior(self, belief: np.ndarray) -> dict[tuple[str, ...], float]:
        """Posterior over joint modes (pending reports summed out)."""
        pj = belief.reshape(len(self.joint), len(self.pending)).sum(axis=1).tolist()
        return dict(zip(self.joint, pj, strict=True))


def _feedback_records(a: Action, modes: dict[str, str]) -> list[tuple[float, str, bool | None]]:
    """(probability, feedback key, job success) for one joint mode."""
    if not a.does_job:
        return [(1.0, "", None)]
    if not a.rely:
        p = float(a.success_prob or 0.0)
        recs: list[tuple[float, str, bool | None]] = [(p, "job:success", True), (1 - p, "job:failure", False)]
        if a.feedback == "none":
            return [(p, "", True), (1 - p, "", False)]
        return recs
    per = [a.success[ch][modes[ch]] for ch in a.rely]
    outcomes: dict[tuple[bool, ...], float] = {}
    for combo in itertools.product((True, False), repeat=len(a.rely)):
        pr = 1.0
        for ok, p in zip(combo, per, strict=True):
            pr *= p if ok else 1 - p
        outcomes[combo] = (1 - a.common_fail) * pr
    allfail = tuple(False for _ in a.rely)
    outcomes[allfail] += a.common_fail
    recs = []
    for combo, pr in outcomes.items():
        if pr <= 0:
            continue
        ok = all(combo) if a.combine in ("single", "conjunctive") else any(combo)
        if a.feedback == "channels":
            key = ",".join(
                f"{ch}:{'success' if c else 'failure'}" for ch, c in zip(a.rely, combo, strict=True)
            )
        elif a.feedback == "joint":
            key = f"job:{'success' if ok else 'failure'}"
        else:
            key = ""
        recs.append((pr, key, ok))
    return recs


def _possible_feedback(a: Action) -> list[str]:
    """Every structurally possible feedback key of an action (for the pending-report states)."""
    if not a.does_job or a.feedback == "none":
        return []
    if a.feedback == "joint" or not a.rely:
        return ["job:success", "job:failure"]
    return [
        ",".join(f"{ch}:{'success' if c else 'failure'}" for ch, c in zip(a.rely, combo, strict=True))
        for combo in itertools.product((True, False), repeat=len(a.rely))
    ]


def _channel_kernel(scn: Scenario, ch: str, a: Action, stage: int) -> np.ndarray:
    modes = scn.channel(ch).modes
    K = np.eye(len(modes))
    kernels = [e.kernel for e in a.effects if e.channel == ch]
    kernels += [t.kernel for t in scn.transitions if t.channel == ch and t.after == stage + 1]
    for k in kernels:
        K = K @ np.array([[k[m][n] for n in modes] for m in modes])
    return K


def _compile_action(
    scn: Scenario,
    a: Action,
    t: int,
    loss: float,
    joint: tuple[tuple[str, ...], ...],
    pending: list[str],
    reach: tuple[int, ...],
) -> CompiledAction:
    names = scn.channel_names
    J, P = len(joint), len(pending)
    K = _channel_kernel(scn, names[0], a, t)
    for ch in names[1:]:
        K = np.kron(K, _channel_kernel(scn, ch, a, t))
    cost_j = np.zeros(J)
    succ_j = np.zeros(J)
    base_index: dict[str, int] = {}
    cells: list[tuple[int, int, int, int, float]] = []
    for j, modes in enumerate(joint):
        recs = _feedback_records(a, dict(zip(names, modes, strict=True)))
        sig = [(1.0, "")]
        if a.signal is not None:
            m = modes[names.index(a.signal.channel)]
            sig = [(row[m], f"{a.signal.name}:{lab}") for lab, row in a.signal.outcomes.items()]
        c_j = a.fee
        for pr, _, ok in recs:
            if ok is not None:
                c_j += pr * (a.success_fee if ok else loss * a.loss_share)
                succ_j[j] += pr * ok
        cost_j[j] = c_j
        for (pr, fb, ok), (ps, sk) in itertools.product(recs, sig):
            w = pr * ps
            if w <= 0:
                continue
            base = sk if a.delay else "; ".join(x for x in (fb, sk) if x)
            b = base_index.setdefault(base, len(base_index))
            newp = pending.index(fb) if (a.delay and fb) else 0
            cells.append((b, j, newp, 2 if ok is None else int(ok), w))
    W = np.zeros((len(base_index), J, P, 3))
    for b, j, newp, k, w in cells:
        W[b, j, newp, k] += w
    obs = tuple(
        "; ".join(x for x in (base, f"late[{pending[p]}]" if pending[p] else "") if x) or NONE_OBS
        for base in base_index
        for p in reach
    )
    R = len(reach)
    Wo = W.sum(axis=3)  # (B, J, P2)
    # M[(b, r), (j, p), (j2, p2)] = Wo[b, j, p2] * K[j, j2] * [p == reach[r]]
    full = np.zeros((len(base_index), R, J, P, J, P))
    core = Wo[:, :, None, :] * K[None, :, :, None]  # (B, J, J2, P2)
    for r, p in enumerate(reach):
        full[:, r, :, p, :, :] = core
    M = full.reshape(len(obs), J * P, J * P)
    return CompiledAction(
        a.name,
        np.repeat(cost_j, P),
        np.repeat(succ_j, P) if a.does_job else None,
        obs,
        M,
        K,
        W,
        reach,
    )


def compile_scenario(scn: Scenario) -> CompiledScenario:
    """Build the belief-space matrices of every (stage, admissible action)."""
    joint = tuple(itertools.product(*(c.modes for c in scn.channels)))
    pending = [""]
    for a in scn.actions.values():
        if a.delay:
            for k in _possible_feedback(a):
                if k not in pending:
                    pending.append(k)
    P = len(pending)
    J = len(joint)
    S = J * P
    prior = np.zeros(S)
    for j, modes in enumerate(joint):
        prior[j * P] = scn.prior[modes]
    stages = []
    cache: dict[tuple[str, float, tuple[int, ...], tuple[int, ...]], CompiledAction] = {}
    reach: tuple[int, ...] = (0,)
    for t, stage in enumerate(scn.stages):
        acts: dict[str, CompiledAction] = {}
        next_reach: set[int] = set()
        for name in stage.actions:
            a = scn.actions[name]
            moving = tuple(i for i, tr in enumerate(scn.transitions) if tr.after == t + 1)
            key = (name, stage.loss, moving, reach)
            if key not in cache:
                cache[key] = _compile_action(scn, a, t, stage.loss, joint, pending, reach)
            acts[name] = cache[key]
            next_reach.update(int(x) for x in np.nonzero(cache[key].W.sum(axis=(0, 1, 3)))[0])
        stages.append(acts)
        reach = tuple(sorted(next_reach))
    return CompiledScenario(scn, joint, tuple(pending), prior, tuple(stages))


# -- the generative side: sampling the same tables (true state, outcome, observation) ----------------------
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
