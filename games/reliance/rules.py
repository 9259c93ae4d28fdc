"""The rules of a reliance problem: the explicit scenario format (channels, actions, costs, feedback,
stages, transitions), parsed and validated into a frozen :class:`Scenario`.

A scenario dict (written by hand for specialised scenarios, or expanded from a blueprint by
:mod:`games.reliance.processes`) is parsed here. Every error names the source
file and the key path, e.g. ``blueprints/route.yaml: scenarios[2].actions.test_P.signal.pass.bad``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TOL = 1e-9
ACTION_KINDS = (
    "delegate",
    "backup",
    "test",
    "support",
    "contract",
    "disclose",
    "message",
    "commit",
    "skip",
)
COMBINE = ("single", "conjunctive", "disjunctive")
FEEDBACK = ("channels", "joint", "none")


class ScenarioError(ValueError):
    """A blueprint or scenario is malformed; the message names the file and the key."""

    def __init__(self, where: str, key: str, message: str) -> None:
        self.where = where
        self.key = key
        self.message = message
        super().__init__(f"{where}: {key}: {message}")


@dataclass(frozen=True)
class Channel:
    """A contribution channel (partner, adviser or component) with a hidden mode."""

    name: str
    label: str
    modes: tuple[str, ...]
    success: Mapping[str, float]


@dataclass(frozen=True)
class Signal:
    """A test, disclosure or message: ``outcomes[label][mode]`` = P(label | mode of ``channel``)."""

    name: str
    channel: str
    outcomes: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Effect:
    """A mode transition caused by an action (support, assistance) after its stage."""

    channel: str
    kernel: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Action:
    """One admissible choice: fees, what it relies on, what it reveals and what it changes."""

    name: str
    kind: str
    label: str
    fee: float = 0.0
    success_fee: float = 0.0
    loss_share: float = 1.0
    rely: tuple[str, ...] = ()
    combine: str = "single"
    success: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    success_prob: float | None = None
    common_fail: float = 0.0
    feedback: str = "none"
    delay: int = 0
    signal: Signal | None = None
    effects: tuple[Effect, ...] = ()
    lock: tuple[str, ...] | None = None
    locked_only: bool = False
    counterpart: str | None = None

    @property
    def does_job(self) -> bool:
        """True when the action carries out the stage's job (relies on channels or a backup)."""
        return bool(self.rely) or self.success_prob is not None


@dataclass(frozen=True)
class Stage:
    """One decision stage: the job (text and loss on failure) and the admissible actions."""

    job: str
    loss: float
    actions: tuple[str, ...]


@dataclass(frozen=True)
class Transition:
    """A between-stage change of a channel's mode (software change, replacement, drift)."""

    after: int
    channel: str
    kernel: Mapping[str, Mapping[str, float]]
    text: str = ""


@dataclass(frozen=True)
class Scenario:
    """A fully specified finite-horizon reliance problem."""

    id: str
    blueprint: str
    category: str
    process: str
    title: str
    setting: str
    channels: tuple[Channel, ...]
    prior: Mapping[tuple[str, ...], float]
    actions: Mapping[str, Action]
    stages: tuple[Stage, ...]
    transitions: tuple[Transition, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def channel_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.channels)

    def channel(self, name: str) -> Channel:
        for c in self.channels:
            if c.name == name:
                return c
        raise KeyError(name)


class _Parser:
    """Key-path aware accessors that raise :class:`ScenarioError`.

    Why not the config schemas (:mod:`trustsim.schema`): a scenario is data whose keys are its own names
    (channels, modes, actions, joint modes such as ``good,bad``), whose values are checked against each other
    (a distribution over the modes its channel declares, summing to 1; a probability clamped within a
    tolerance; stages naming defined actions), and whose errors name the source file as well as the key.
    A dataclass schema fixes its field names and checks each value alone, so these rules need code."""

    def __init__(self, where: str, prefix: str) -> None:
        self.where = where
        self.prefix = prefix

    def key(self, *parts: object) -> str:
        out = self.prefix
        for p in parts:
            out = f"{out}[{p}]" if isinstance(p, int) else (f"{out}.{p}" if out else str(p))
        return out

    def fail(self, key: str, message: str) -> ScenarioError:
        return ScenarioError(self.where, key, message)

    def mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}")
        return value

    def seq(self, value: Any, key: str) -> Sequence[Any]:
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise self.fail(key, f"expected a list, got {type(value).__name__}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "expected a non-empty string")
        return value.strip()

    def number(self, value: Any, key: str, lo: float = 0.0, hi: float = math.inf) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(key, f"expected a number, got {value!r}")
        if not lo <= float(value) <= hi:
            raise self.fail(key, f"value {value} outside [{lo}, {hi}]")
        return float(value)

    def prob(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(key, f"expected a probability, got {value!r}")
        if not -TOL <= float(value) <= 1 + TOL:
            raise self.fail(key, f"probability {value} outside [0, 1]")
        return min(1.0, max(0.0, float(value)))

    def distribution(self, value: Any, key: str, modes: Sequence[str]) -> dict[str, float]:
        """A distribution over ``modes`` (missing modes = 0) that must sum to 1."""
        raw = self.mapping(value, key)
        out = {m: 0.0 for m in modes}
        for m, p in raw.items():
            if m not in out:
                raise self.fail(self.join(key, m), f"unknown mode {m!r}; modes are {list(modes)}")
            out[m] = self.prob(p, self.join(key, m))
        total = sum(out.values())
        if abs(total - 1.0) > 1e-6:
            raise self.fail(key, f"probabilities sum to {total:.6g}, not 1")
        return out

    def kernel(self, value: Any, key: str, modes: Sequence[str]) -> dict[str, dict[str, float]]:
        """A Markov kernel over ``modes``: ``{keep, redraw}`` shortcut or explicit rows (missing = stay)."""
        raw = self.mapping(value, key)
        if "keep" in raw or "redraw" in raw:
            extra = set(raw) - {"keep", "redraw"}
            if extra:
                raise self.fail(self.join(key, sorted(extra)[0]), "not allowed next to keep/redraw")
            keep = self.prob(raw.get("keep", 0.0), self.join(key, "keep"))
            redraw = self.distribution(raw.get("redraw"), self.join(key, "redraw"), modes)
            return {m: {n: keep * (m == n) + (1 - keep) * redraw[n] for n in modes} for m in modes}
        rows = {m: {n: float(m == n) for n in modes} for m in modes}
        for m, row in raw.items():
            if m not in rows:
                raise self.fail(self.join(key, m), f"unknown mode {m!r}; modes are {list(modes)}")
            rows[m] = self.distribution(row, self.join(key, m), modes)
        return rows

    @staticmethod
    def join(key: str, part: object) -> str:
        return f"{key}.{part}" if key else str(part)


def parse_scenario(data: Mapping[str, Any], where: str = "<scenario>", prefix: str = "") -> Scenario:
    """Parse and validate an explicit scenario dict.

    Args:
        data: The scenario mapping (see docs/reliance.md, "Scenario format").
        where: The source file named in errors.
        prefix: Key path of ``data`` inside the file (e.g. ``scenarios[3]``).

    Returns:
        The validated :class:`Scenario`.

    Raises:
        ScenarioError: On any malformed or inconsistent field.
    """
    P = _Parser(where, prefix)
    d = P.mapping(data, prefix or "<root>")
    known = {
        "id", "blueprint", "category", "process", "title", "setting", "channels", "joint_prior",
        "actions", "stages", "transitions", "params",
    }  # fmt: skip
    for k in d:
        if k not in known:
            raise P.fail(P.key(k), f"unknown key; expected one of {sorted(known)}")
    for req in ("id", "category", "setting", "channels", "actions", "stages"):
        if req not in d:
            raise P.fail(P.key(req), "missing required key")
    sid = P.text(d["id"], P.key("id"))
    channels = _parse_channels(P, d["channels"])
    names = tuple(c.name for c in channels)
    prior = _parse_prior(P, d, channels)
    actions = {
        name: _parse_action(P, name, spec, channels)
        for name, spec in P.mapping(d["actions"], P.key("actions")).items()
    }
    if not actions:
        raise P.fail(P.key("actions"), "no actions defined")
    stages = _parse_stages(P, d["stages"], actions)
    transitions = _parse_transitions(P, d.get("transitions", []), channels, len(stages))
    _check_actions(P, actions, stages, names)
    return Scenario(
        id=sid,
        blueprint=str(d.get("blueprint", sid)),
        category=P.text(d["category"], P.key("category")),
        process=str(d.get("process", "specialised")),
        title=str(d.get("title", sid)),
        setting=P.text(d["setting"], P.key("setting")),
        channels=channels,
        prior=prior,
        actions=actions,
        stages=stages,
        transitions=transitions,
        params=dict(d.get("params", {}) or {}),
        source=where,
    )


def _parse_channels(P: _Parser, raw: Any) -> tuple[Channel, ...]:
    chans = []
    for name, spec in P.mapping(raw, P.key("channels")).items():
        k = P.key("channels", name)
        spec = P.mapping(spec, k)
        modes = tuple(P.seq(spec.get("modes", ["good", "bad"]), P.join(k, "modes")))
        if len(modes) < 2 or len(set(modes)) != len(modes):
            raise P.fail(P.join(k, "modes"), "need at least two distinct modes")
        success = {m: 0.0 for m in modes}
        raw_s = spec.get("success", {})
        for m, p in P.mapping(raw_s, P.join(k, "success")).items():
            if m not in success:
                raise P.fail(P.join(k, f"success.{m}"), f"unknown mode {m!r}; modes are {list(modes)}")
            success[m] = P.prob(p, P.join(k, f"success.{m}"))
        chans.append(Channel(str(name), str(spec.get("label", name)), modes, success))
    if not chans:
        raise P.fail(P.key("channels"), "no channels defined")
    return tuple(chans)


def _parse_prior(
    P: _Parser, d: Mapping[str, Any], channels: tuple[Channel, ...]
) -> dict[tuple[str, ...], float]:
    joint = list(itertools.product(*(c.modes for c in channels)))
    if "joint_prior" in d:
        k = P.key("joint_prior")
        raw = P.mapping(d["joint_prior"], k)
        out = {j: 0.0 for j in joint}
        for key, p in raw.items():
            modes = tuple(s.strip() for s in str(key).split(","))
            if modes not in out:
                raise P.fail(
                    P.join(k, key),
                    f"unknown joint mode; expected comma-joined modes of {len(channels)} channel(s)",
                )
            out[modes] = P.prob(p, P.join(k, key))
        total = sum(out.values())
        if abs(total - 1) > 1e-6:
            raise P.fail(k, f"probabilities sum to {total:.6g}, not 1")
        return out
    margs = []
    for c in channels:
        k = P.key("channels", c.name, "prior")
        spec = d["channels"][c.name]
        if "prior" not in spec:
            raise P.fail(k, "missing prior (or give a top-level joint_prior)")
        margs.append(P.distribution(spec["prior"], k, c.modes))
    return {j: math.prod(m[x] for m, x in zip(margs, j, strict=True)) for j in joint}


def _parse_signal(P: _Parser, k: str, raw: Any, channels: tuple[Channel, ...], name: str) -> Signal:
    spec = P.mapping(raw, k)
    ch = spec.get("channel")
    byname = {c.name: c for c in channels}
    if ch not in byname:
        raise P.fail(P.join(k, "channel"), f"unknown channel {ch!r}; channels are {list(byname)}")
    modes = byname[ch].modes
    if "pass" in spec:
        pass_p = {m: P.prob(spec["pass"].get(m, None), P.join(k, f"pass.{m}")) for m in modes}
        outcomes = {"pass": pass_p, "fail": {m: 1 - p for m, p in pass_p.items()}}
    else:
        raw_o = P.mapping(spec.get("outcomes"), P.join(k, "outcomes"))
        outcomes = {}
        for label, row in raw_o.items():
            outcomes[str(label)] = {
                m: P.prob(
                    P.mapping(row, P.join(k, f"outcomes.{label}")).get(m, 0.0),
                    P.join(k, f"outcomes.{label}.{m}"),
                )
                for m in modes
            }
        for m in modes:
            total = sum(o[m] for o in outcomes.values())
            if abs(total - 1) > 1e-6:
                raise P.fail(P.join(k, "outcomes"), f"P(outcome | {m}) sums to {total:.6g}, not 1")
    return Signal(str(spec.get("name", name)), ch, outcomes)


def _parse_action(P: _Parser, name: str, raw: Any, channels: tuple[Channel, ...]) -> Action:
    k = P.key("actions", name)
    spec = P.mapping(raw, k)
    allowed = {
        "kind", "label", "fee", "success_fee", "loss_share", "rely", "combine", "success", "success_prob",
        "common_fail", "feedback", "delay", "signal", "effects", "lock", "locked_only", "counterpart",
    }  # fmt: skip
    for key in spec:
        if key not in allowed:
            raise P.fail(P.join(k, key), f"unknown key; expected one of {sorted(allowed)}")
    kind = spec.get("kind", "delegate")
    if kind not in ACTION_KINDS:
        raise P.fail(P.join(k, "kind"), f"unknown kind {kind!r}; expected one of {list(ACTION_KINDS)}")
    byname = {c.name: c for c in channels}
    rely = tuple(P.seq(spec.get("rely", []), P.join(k, "rely")))
    for ch in rely:
        if ch not in byname:
            raise P.fail(P.join(k, "rely"), f"unknown channel {ch!r}; channels are {list(byname)}")
    combine = spec.get("combine", "single" if len(rely) <= 1 else "conjunctive")
    if combine not in COMBINE:
        raise P.fail(P.join(k, "combine"), f"unknown rule {combine!r}; expected one of {list(COMBINE)}")
    if combine == "single" and len(rely) > 1:
        raise P.fail(P.join(k, "combine"), "'single' needs exactly one relied-on channel")
    success: dict[str, dict[str, float]] = {}
    raw_s = P.mapping(spec.get("success", {}), P.join(k, "success"))
    for ch in rely:
        row = dict(byname[ch].success)
        if ch in raw_s:
            for m, p in P.mapping(raw_s[ch], P.join(k, f"success.{ch}")).items():
                if m not in row:
                    raise P.fail(P.join(k, f"success.{ch}.{m}"), f"unknown mode {m!r}")
                row[m] = P.prob(p, P.join(k, f"success.{ch}.{m}"))
        success[ch] = row
    for ch in raw_s:
        if ch not in rely:
            raise P.fail(
                P.join(k, f"success.{ch}"), "success given for a channel the action does not rely on"
            )
    success_prob = None
    if "success_prob" in spec:
        if rely:
            raise P.fail(P.join(k, "success_prob"), "only for actions that rely on no channel (backups)")
        success_prob = P.prob(spec["success_prob"], P.join(k, "success_prob"))
    feedback = spec.get("feedback", "none")
    if feedback not in FEEDBACK:
        raise P.fail(
            P.join(k, "feedback"), f"unknown feedback {feedback!r}; expected one of {list(FEEDBACK)}"
        )
    if feedback == "channels" and not rely:
        raise P.fail(P.join(k, "feedback"), "'channels' feedback needs relied-on channels")
    if feedback != "none" and not (rely or success_prob is not None):
        raise P.fail(P.join(k, "feedback"), "outcome feedback for an action that does no job")
    delay = int(P.number(spec.get("delay", 0), P.join(k, "delay"), 0, 1))
    signal = None
    if "signal" in spec:
        signal = _parse_signal(P, P.join(k, "signal"), spec["signal"], channels, name)
    effects = []
    for i, e in enumerate(P.seq(spec.get("effects", []), P.join(k, "effects"))):
        ek = f"{P.join(k, 'effects')}[{i}]"
        e = P.mapping(e, ek)
        ch = e.get("channel")
        if ch not in byname:
            raise P.fail(f"{ek}.channel", f"unknown channel {ch!r}; channels are {list(byname)}")
        effects.append(Effect(ch, P.kernel(e.get("kernel"), f"{ek}.kernel", byname[ch].modes)))
    lock = None
    if "lock" in spec:
        lock = tuple(str(x) for x in P.seq(spec["lock"], P.join(k, "lock")))
    return Action(
        name=str(name),
        kind=kind,
        label=P.text(spec.get("label", name), P.join(k, "label")),
        fee=P.number(spec.get("fee", 0.0), P.join(k, "fee")),
        success_fee=P.number(spec.get("success_fee", 0.0), P.join(k, "success_fee")),
        loss_share=P.prob(spec.get("loss_share", 1.0), P.join(k, "loss_share")),
        rely=rely,
        combine=combine,
        success=success,
        success_prob=success_prob,
        common_fail=P.prob(spec.get("common_fail", 0.0), P.join(k, "common_fail")),
        feedback=feedback,
        delay=delay,
        signal=signal,
        effects=tuple(effects),
        lock=lock,
        locked_only=bool(spec.get("locked_only", False)),
        counterpart=spec.get("counterpart"),
    )


def _parse_stages(P: _Parser, raw: Any, actions: Mapping[str, Action]) -> tuple[Stage, ...]:
    stages = []
    for i, s in enumerate(P.seq(raw, P.key("stages"))):
        k = P.key("stages", i)
        s = P.mapping(s, k)
        acts = tuple(str(a) for a in P.seq(s.get("actions"), f"{k}.actions"))
        if not acts:
            raise P.fail(f"{k}.actions", "a stage needs at least one admissible action")
        if len(set(acts)) != len(acts):
            raise P.fail(f"{k}.actions", "duplicate action")
        loss = P.number(s.get("loss", 0.0), f"{k}.loss")
        for a in acts:
            if a not in actions:
                raise P.fail(f"{k}.actions", f"unknown action {a!r}; defined actions are {sorted(actions)}")
            if loss > 0 and not actions[a].does_job:
                raise P.fail(f"{k}.actions", f"action {a!r} does not carry out the stage's job (loss {loss})")
            if loss == 0 and actions[a].does_job and actions[a].kind == "delegate":
                raise P.fail(f"{k}.actions", f"delegation {a!r} at a stage without a job")
        stages.append(Stage(str(s.get("job", "")), loss, acts))
    if not stages:
        raise P.fail(P.key("stages"), "no stages")
    return tuple(stages)


def _parse_transitions(
    P: _Parser, raw: Any, channels: tuple[Channel, ...], n_stages: int
) -> tuple[Transition, ...]:
    byname = {c.name: c for c in channels}
    out = []
    for i, t in enumerate(P.seq(raw, P.key("transitions"))):
        k = P.key("transitions", i)
        t = P.mapping(t, k)
        after = t.get("after")
        if not isinstance(after, int) or isinstance(after, bool) or not 1 <= after <= n_stages - 1:
            raise P.fail(
                f"{k}.after",
                f"transition after stage {after!r} can never affect a decision (stages 1..{n_stages - 1} allowed)",
            )
        ch = t.get("channel")
        if ch not in byname:
            raise P.fail(f"{k}.channel", f"unknown channel {ch!r}; channels are {list(byname)}")
        out.append(
            Transition(
                after, ch, P.kernel(t.get("kernel"), f"{k}.kernel", byname[ch].modes), str(t.get("text", ""))
            )
        )
    return tuple(out)


def _check_actions(
    P: _Parser, actions: Mapping[str, Action], stages: tuple[Stage, ...], names: tuple[str, ...]
) -> None:
    used = {a for s in stages for a in s.actions}
    for name, a in actions.items():
        k = P.key("actions", name)
        if name not in used:
            raise P.fail(k, "action is admissible at no stage (unreachable)")
        if a.locked_only:
            first = min(i for i, s in enumerate(stages) if name in s.actions)
            unlockers = [
                b
                for b in actions.values()
                if b.lock and name in b.lock and any(b.name in s.actions for s in stages[:first])
            ]
            if not unlockers:
                raise P.fail(f"{k}.locked_only", "no earlier action's lock admits this action (unreachable)")
        if a.counterpart is not None and a.counterpart not in actions:
            raise P.fail(f"{k}.counterpart", f"unknown action {a.counterpart!r}")
        if a.lock is not None:
            for x in a.lock:
                if x not in actions:
                    raise P.fail(f"{k}.lock", f"unknown action {x!r}")
            for i, s in enumerate(stages):
                if name in s.actions:
                    for j in range(i + 1, len(stages)):
                        if not set(stages[j].actions) & set(a.lock):
                            raise P.fail(
                                f"{k}.lock",
                                f"after stage {i + 1} the lock leaves stage {j + 1} with no admissible action",
                            )
