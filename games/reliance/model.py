"""Compile a :class:`~games.reliance.spec.Scenario` into belief-space matrices.

The hidden state is (joint channel modes, pending delayed report). For stage ``t`` and action ``a``:

- ``cost[s]`` is the expected stage cost in hidden state ``s`` (fees plus expected loss),
- ``M[o, s, s']`` = P(observation ``o``, next hidden state ``s'`` | ``s``), including the action's effects
  and the between-stage transitions after stage ``t``,

so a belief ``b`` (row vector) has expected cost ``b @ cost`` and unnormalised posterior ``b @ M[o]``.
The same tables drive the generative sampler (true state, outcome, observation).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from games.reliance.spec import Action, Scenario

NONE_OBS = "nothing observed"


@dataclass(frozen=True)
class Outcome:
    """One way a stage can play out from a hidden state (for the generative sampler)."""

    prob: float
    obs: int
    success: bool | None
    pending: int


@dataclass
class CompiledAction:
    """The matrices of one action at one stage."""

    name: str
    stage: int
    cost: np.ndarray  # (S,)
    success: np.ndarray | None  # (S,) P(job success | s); None for actions without a job
    obs: tuple[str, ...]
    M: np.ndarray  # (O, S, S)
    kernel: np.ndarray  # (J, J) mode transition after the stage
    outcomes: tuple[tuple[Outcome, ...], ...]  # per hidden state


@dataclass
class CompiledScenario:
    """A scenario in matrix form."""

    scenario: Scenario
    joint: tuple[tuple[str, ...], ...]
    pending: tuple[str, ...]
    prior: np.ndarray  # (S,)
    stages: tuple[dict[str, CompiledAction], ...]

    @property
    def n_states(self) -> int:
        return len(self.joint) * len(self.pending)

    def state(self, j: int, p: int) -> int:
        return j * len(self.pending) + p

    def split(self, s: int) -> tuple[int, int]:
        return divmod(s, len(self.pending))

    def marginals(self, belief: np.ndarray) -> dict[str, dict[str, float]]:
        """Posterior P(mode) per channel from a belief over hidden states."""
        pj = belief.reshape(len(self.joint), len(self.pending)).sum(axis=1)
        out: dict[str, dict[str, float]] = {}
        for i, c in enumerate(self.scenario.channels):
            out[c.name] = {
                m: float(sum(p for j, p in zip(self.joint, pj, strict=True) if j[i] == m)) for m in c.modes
            }
        return out


def _feedback_records(a: Action, modes: dict[str, str]) -> list[tuple[float, str, bool | None]]:
    """(probability, feedback key, job success) for one joint mode."""
    if not a.does_job:
        return [(1.0, "", None)]
    if not a.rely:
        p = float(a.success_prob)
        recs = [(p, "job:success", True), (1 - p, "job:failure", False)]
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


def compile_scenario(scn: Scenario) -> CompiledScenario:
    """Build the belief-space matrices of every (stage, admissible action)."""
    joint = tuple(itertools.product(*(c.modes for c in scn.channels)))
    names = scn.channel_names
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
    for t, stage in enumerate(scn.stages):
        acts: dict[str, CompiledAction] = {}
        for name in stage.actions:
            a = scn.actions[name]
            K = np.ones((1, 1))
            for ch in names:
                K = np.kron(K, _channel_kernel(scn, ch, a, t))
            cost = np.zeros(S)
            succ = np.zeros(S) if a.does_job else None
            obs_index: dict[str, int] = {}
            entries: list[list[Outcome]] = [[] for _ in range(S)]
            for j, modes in enumerate(joint):
                recs = _feedback_records(a, dict(zip(names, modes, strict=True)))
                sig = [(1.0, "")]
                if a.signal is not None:
                    m = modes[names.index(a.signal.channel)]
                    sig = [(row[m], f"{a.signal.name}:{lab}") for lab, row in a.signal.outcomes.items()]
                c_j = a.fee
                s_j = 0.0
                for pr, _, ok in recs:
                    if ok is not None:
                        c_j += pr * (a.success_fee if ok else stage.loss * a.loss_share)
                        s_j += pr * ok
                for p in range(P):
                    s = j * P + p
                    cost[s] = c_j
                    if succ is not None:
                        succ[s] = s_j
                    for (pr, fb, ok), (ps, sk) in itertools.product(recs, sig):
                        w = pr * ps
                        if w <= 0:
                            continue
                        parts = [sk] if a.delay else [fb, sk]
                        if pending[p]:
                            parts.append(f"late[{pending[p]}]")
                        key = "; ".join(x for x in parts if x) or NONE_OBS
                        o = obs_index.setdefault(key, len(obs_index))
                        newp = pending.index(fb) if (a.delay and fb) else 0
                        entries[s].append(Outcome(w, o, ok, newp))
            obs = tuple(obs_index)
            M = np.zeros((len(obs), S, S))
            for s in range(S):
                j = s // P
                for e in entries[s]:
                    M[e.obs, s, e.pending :: P] += e.prob * K[j]
            acts[name] = CompiledAction(name, t, cost, succ, obs, M, K, tuple(tuple(e) for e in entries))
        stages.append(acts)
    return CompiledScenario(scn, joint, tuple(pending), prior, tuple(stages))
