"""Expand a blueprint (fixed mechanics) × interaction process × parameters into an explicit scenario dict.

Main processes: ``repeated``, ``delayed``, ``improvement``, ``replacement``, ``withdrawal``.
Specialised kinds: ``contract``, ``disclosure``, ``communication``, ``commitment``.
The dict is then validated by :func:`games.reliance.rules.parse_scenario`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, NoReturn

from games.reliance.rules import ScenarioError

MAIN_PROCESSES = ("repeated", "delayed", "improvement", "replacement", "withdrawal")
SPECIAL_PROCESSES = ("contract", "disclosure", "communication", "commitment")
PROCESS_TEXT = {
    "repeated": "Modes are stable; after each job you see how it went, so cooperating teaches you about the partners.",
    "delayed": "Ordinary jobs report their outcome only after the next decision; an audited job (extra fee) reports at once.",
    "improvement": "Before the two jobs you may support one channel (it may improve), test one channel, or do neither.",
    "replacement": "Before the two jobs you may audit either channel; afterwards one channel may be replaced, so evidence about it can lose its value.",
    "withdrawal": "An assisted option is available for the first two jobs only; the assistance is withdrawn before the third.",
    "contract": "Each job is placed under a contract (default, performance-based or guaranteed) or handed to the backup.",
    "disclosure": "Before the two jobs you may ask the partner to disclose its record; disclosure is voluntary and may be selective.",
    "communication": "Before the two jobs you may ask the partner for an assurance; talk is cheap and partners of either kind may give it.",
    "commitment": "You may commit to the partner for all three jobs at a discount, giving up the option to switch later.",
}

_BLUEPRINT_KEYS = {
    "id", "title", "setting", "channels", "modes", "correlation", "rule", "feedback", "job", "backup", "test",
    "support", "audit_fee", "replace", "assist", "change", "common_fail", "both_fee", "cover_fee", "processes",
    "variants", "contract", "disclosure", "assurance", "commitment", "kind",
}  # fmt: skip


def _fmt(x: float) -> str:
    return f"{x:g}"


class _BP:
    """Validated access to one blueprint mapping.

    Why not the config schemas (:mod:`trustsim.schema`): a blueprint is a template whose keys depend on its
    ``kind`` and process (a number is read by dotted path, with a default that only some processes have),
    and its variants merge into it by dotted overrides before it is read; the scenario it expands into is
    then checked whole by :func:`games.reliance.rules.parse_scenario`. Errors name the file and the key."""

    def __init__(self, bp: Mapping[str, Any], where: str, key: str) -> None:
        self.bp = bp
        self.where = where
        self.key = key
        for k in bp:
            if k not in _BLUEPRINT_KEYS:
                self.fail(k, f"unknown key; expected one of {sorted(_BLUEPRINT_KEYS)}")

    def fail(self, sub: str, msg: str) -> NoReturn:
        raise ScenarioError(self.where, f"{self.key}.{sub}", msg)

    def get(self, name: str, default: Any = None, required: bool = False) -> Any:
        if name not in self.bp:
            if required:
                self.fail(name, "missing required key")
            return default
        return self.bp[name]

    def num(self, path: str, default: float | None = None, lo: float = 0.0, hi: float = math.inf) -> float:
        cur: Any = self.bp
        for part in path.split("."):
            if not isinstance(cur, Mapping) or part not in cur:
                if default is None:
                    self.fail(path, "missing required number")
                return float(default)
            cur = cur[part]
        if isinstance(cur, bool) or not isinstance(cur, int | float):
            self.fail(path, f"expected a number, got {cur!r}")
        if not lo <= cur <= hi:
            self.fail(path, f"value {cur} outside [{lo}, {hi}]")
        return float(cur)


def _apply_overrides(bp: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(bp)
    for dotted, value in overrides.items():
        cur = out
        parts = str(dotted).split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
    return out


def expand_blueprint(bp: Mapping[str, Any], category: str, where: str, key: str) -> list[dict[str, Any]]:
    """All scenario dicts of one blueprint (processes × variants)."""
    b0 = _BP(bp, where, key)
    bid = str(b0.get("id", required=True))
    kind = b0.get("kind", "main")
    if kind not in ("main", "specialised"):
        b0.fail("kind", "expected 'main' or 'specialised'")
    allowed = MAIN_PROCESSES if kind == "main" else SPECIAL_PROCESSES
    procs = b0.get("processes", list(MAIN_PROCESSES) if kind == "main" else None, required=kind != "main")
    if isinstance(procs, str):
        procs = [procs]
    for p in procs:
        if p not in allowed:
            b0.fail("processes", f"unknown process {p!r} for a {kind} blueprint; expected {list(allowed)}")
    variants = b0.get("variants", [{}]) or [{}]
    out = []
    for vi, var in enumerate(variants):
        if not isinstance(var, Mapping):
            b0.fail(f"variants[{vi}]", "expected a mapping of dotted keys to values")
        merged = _apply_overrides(dict(bp), var)
        b = _BP(merged, where, key if not var else f"{key}.variants[{vi}]")
        for p in procs:
            sid = f"{bid}.{p}" + (f".v{vi}" if len(variants) > 1 else "")
            out.append(_build(b, bid, sid, category, p, dict(var)))
    return out


def _modes(b: _BP) -> list[str]:
    modes = b.get("modes", ["good", "bad"])
    if not isinstance(modes, list) or len(modes) != 2:
        b.fail("modes", "blueprints use exactly two modes (better first)")
    return [str(m) for m in modes]


def _channels(b: _BP, modes: list[str]) -> dict[str, Any]:
    chans = b.get("channels", required=True)
    if not isinstance(chans, Mapping) or not 1 <= len(chans) <= 3:
        b.fail("channels", "expected a mapping of 1–3 channels")
    out = {}
    for name, c in chans.items():
        if not isinstance(c, Mapping):
            b.fail(f"channels.{name}", "expected a mapping")
        prior = b.num(f"channels.{name}.prior", hi=1.0)
        succ = c.get("success")
        if not isinstance(succ, list) or len(succ) != 2:
            b.fail(f"channels.{name}.success", "expected [success if good, success if bad]")
        out[name] = {
            "label": str(c.get("label", name)),
            "modes": modes,
            "prior": {modes[0]: prior, modes[1]: 1 - prior},
            "success": dict(zip(modes, succ, strict=True)),
        }
    return out


def _joint_prior(b: _BP, chans: dict[str, Any], modes: list[str]) -> dict[str, float] | None:
    rho = b.num("correlation", 0.0, lo=-1.0, hi=1.0)
    if rho == 0.0:
        return None
    names = list(chans)
    if len(names) != 2:
        b.fail("correlation", "correlation needs exactly two channels")
    p = chans[names[0]]["prior"][modes[0]]
    q = chans[names[1]]["prior"][modes[0]]
    cov = rho * math.sqrt(p * (1 - p) * q * (1 - q))
    g, w = modes
    joint = {
        f"{g},{g}": p * q + cov,
        f"{g},{w}": p * (1 - q) - cov,
        f"{w},{g}": (1 - p) * q - cov,
        f"{w},{w}": (1 - p) * (1 - q) + cov,
    }
    if min(joint.values()) < -1e-12:
        b.fail("correlation", f"correlation {rho} is impossible with priors {p} and {q}")
    return {k: max(0.0, v) for k, v in joint.items()}


def _job_actions(b: _BP, chans: dict[str, Any], noun: str) -> dict[str, dict[str, Any]]:
    """The actions that carry out a job, by the blueprint's contribution rule."""
    rule = b.get("rule", "single")
    feedback = b.get("feedback", "channels")
    if feedback not in ("channels", "joint"):
        b.fail("feedback", "expected 'channels' or 'joint'")
    names = list(chans)
    cf = b.num("common_fail", 0.0, hi=1.0)
    acts: dict[str, dict[str, Any]] = {}
    if rule == "single":
        for n in names:
            acts[f"delegate_{n}"] = {
                "kind": "delegate",
                "label": f"give the {noun} to {chans[n]['label']}",
                "rely": [n],
                "feedback": "channels",
            }
    elif rule in ("conjunctive", "disjunctive"):
        if len(names) != 2:
            b.fail("rule", f"'{rule}' blueprints need exactly two channels")
        p, q = names
        both = "use both" if rule == "disjunctive" else "combine"
        acts["delegate_both"] = {
            "kind": "delegate",
            "label": f"{both} {chans[p]['label']} and {chans[q]['label']} on the {noun}",
            "rely": [p, q],
            "combine": rule,
            "feedback": feedback,
            "common_fail": cf,
            "fee": b.num("both_fee", 0.0) if rule == "disjunctive" else 0.0,
        }
        if rule == "disjunctive":
            for n in names:
                acts[f"delegate_{n}"] = {
                    "kind": "delegate",
                    "label": f"use only {chans[n]['label']} on the {noun}",
                    "rely": [n],
                    "feedback": "channels",
                }
        else:
            cover = b.num("cover_fee", b.num("backup.fee") / 2)
            for n, other in ((p, q), (q, p)):
                acts[f"cover_{n}"] = {
                    "kind": "delegate",
                    "label": f"do {chans[n]['label']}'s part in-house (fee {_fmt(cover)}) and rely on {chans[other]['label']} only",
                    "rely": [other],
                    "feedback": "channels",
                    "fee": cover,
                }
    else:
        b.fail("rule", f"unknown rule {rule!r}; expected single, conjunctive or disjunctive")
    backup = b.get("backup", required=True)
    acts["backup"] = {
        "kind": "backup",
        "label": f"{backup.get('label', 'use the backup')} (fee {_fmt(b.num('backup.fee'))})",
        "fee": b.num("backup.fee"),
        "success_prob": b.num("backup.success", 1.0, hi=1.0),
    }
    return acts


def _signal(b: _BP, key: str, ch: str, modes: list[str]) -> dict[str, Any]:
    pp = b.get(key, {}).get("pass") if isinstance(b.get(key), Mapping) else None
    if not isinstance(pp, list) or len(pp) != 2:
        b.fail(f"{key}.pass", "expected [P(pass | good), P(pass | bad)]")
    return {"channel": ch, "name": f"test_{ch}", "pass": dict(zip(modes, pp, strict=True))}


def _improve_kernel(b: _BP, prob: float, modes: list[str]) -> dict[str, Any]:
    return {modes[1]: {modes[0]: prob, modes[1]: 1 - prob}}


def _build(b: _BP, bid: str, sid: str, category: str, process: str, params: dict[str, Any]) -> dict[str, Any]:
    modes = _modes(b)
    chans = _channels(b, modes)
    names = list(chans)
    job = b.get("job", required=True)
    if not isinstance(job, Mapping):
        b.fail("job", "expected {noun, loss}")
    noun = str(job.get("noun", "job"))
    loss = b.num("job.loss")
    acts = _job_actions(b, chans, noun)
    job_names = list(acts)
    stages: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    change = b.get("change")
    if change is not None and process in ("repeated", "delayed", "withdrawal", "contract", "commitment"):
        ch = change.get("channel", names[0])
        if ch not in chans:
            b.fail("change.channel", f"unknown channel {ch!r}")
        keep = b.num("change.keep", hi=1.0)
        redraw = b.num("change.redraw", chans[ch]["prior"][modes[0]], hi=1.0)
        for after in change.get("after", [1]):
            transitions.append(
                {
                    "after": after,
                    "channel": ch,
                    "kernel": {"keep": keep, "redraw": {modes[0]: redraw, modes[1]: 1 - redraw}},
                    "text": str(change.get("text", f"{chans[ch]['label']} changes.")),
                }
            )

    def job_stage(i: int, actions: list[str]) -> dict[str, Any]:
        return {"job": f"{noun} {i}", "loss": loss, "actions": actions}

    prep_label = "preparation"
    if process == "repeated":
        stages = [job_stage(i, job_names) for i in (1, 2, 3)]
    elif process == "delayed":
        audit = b.num("audit_fee", b.num("test.fee", 1.0))
        audited = []
        for n in list(job_names):
            a = acts[n]
            if a["kind"] != "delegate":
                continue
            a["delay"] = 1
            acts[f"{n}_audited"] = {
                **{k: v for k, v in a.items() if k != "delay"},
                "fee": a.get("fee", 0.0) + audit,
                "counterpart": n,
                "label": f"{a['label']}, with an audit (extra fee {_fmt(audit)}) that reports the outcome at once",
            }
            audited.append(f"{n}_audited")
        stages = [job_stage(i, job_names + audited) for i in (1, 2, 3)]
    elif process == "improvement":
        sup = b.get("support", required=True)
        test = b.get("test", required=True)
        prep = []
        for n in names:
            acts[f"support_{n}"] = {
                "kind": "support",
                "label": f"{sup.get('label', 'support')} for {chans[n]['label']} (fee {_fmt(b.num('support.fee'))})",
                "fee": b.num("support.fee"),
                "effects": [
                    {"channel": n, "kernel": _improve_kernel(b, b.num("support.prob", hi=1.0), modes)}
                ],
            }
            acts[f"test_{n}"] = {
                "kind": "test",
                "label": f"{test.get('label', 'test')} of {chans[n]['label']} (fee {_fmt(b.num('test.fee'))})",
                "fee": b.num("test.fee"),
                "signal": _signal(b, "test", n, modes),
                "counterpart": "skip",
            }
            prep += [f"support_{n}", f"test_{n}"]
        acts["skip"] = {"kind": "skip", "label": "neither support nor test; go straight to the jobs"}
        stages = [
            {"job": prep_label, "loss": 0, "actions": [*prep, "skip"]},
            job_stage(1, job_names),
            job_stage(2, job_names),
        ]
    elif process == "replacement":
        rep = b.get("replace", required=True)
        test = b.get("test", required=True)
        ch = rep.get("channel", names[-1])
        if ch not in chans:
            b.fail("replace.channel", f"unknown channel {ch!r}")
        prep = []
        for n in names:
            acts[f"audit_{n}"] = {
                "kind": "test",
                "label": f"{test.get('label', 'audit')} of {chans[n]['label']} (fee {_fmt(b.num('test.fee'))})",
                "fee": b.num("test.fee"),
                "signal": _signal(b, "test", n, modes),
                "counterpart": "skip",
            }
            prep.append(f"audit_{n}")
        acts["skip"] = {"kind": "skip", "label": "audit neither; go straight to the jobs"}
        prob = b.num("replace.prob", hi=1.0)
        prior = chans[ch]["prior"]
        transitions.append(
            {
                "after": 1,
                "channel": ch,
                "kernel": {"keep": 1 - prob, "redraw": prior},
                "text": str(rep.get("text", f"{chans[ch]['label']} may be replaced.")),
            }
        )
        stages = [
            {"job": prep_label, "loss": 0, "actions": [*prep, "skip"]},
            job_stage(1, job_names),
            job_stage(2, job_names),
        ]
    elif process == "withdrawal":
        ast = b.get("assist", required=True)
        boost = b.num("assist.boost", hi=1.0)
        target = ast.get("channel", names[0])
        if target not in chans:
            b.fail("assist.channel", f"unknown channel {target!r}")
        assisted = []
        for n in list(job_names):
            a = acts[n]
            if a["kind"] != "delegate" or target not in a.get("rely", []):
                continue
            s = chans[target]["success"]
            acts[f"{n}_assisted"] = {
                **a,
                "fee": a.get("fee", 0.0) + b.num("assist.fee"),
                "success": {target: {m: s[m] + boost * (1 - s[m]) for m in modes}},
                "label": f"{a['label']}, with {ast.get('label', 'assistance')} (extra fee {_fmt(b.num('assist.fee'))})",
            }
            assisted.append(f"{n}_assisted")
        stages = [
            job_stage(1, job_names + assisted),
            job_stage(2, job_names + assisted),
            job_stage(3, job_names),
        ]
    elif process in SPECIAL_PROCESSES:
        stages = _special(b, process, acts, chans, modes, job_names, job_stage, prep_label)
    else:
        b.fail("processes", f"unknown process {process!r}")
    return {
        "id": sid,
        "blueprint": bid,
        "category": category,
        "process": process,
        "title": str(b.get("title", bid)),
        "setting": " ".join([str(b.get("setting", required=True)).strip(), PROCESS_TEXT[process]]),
        "channels": chans,
        **({"joint_prior": jp} if (jp := _joint_prior(b, chans, modes)) else {}),
        "actions": acts,
        "stages": stages,
        "transitions": transitions,
        "params": params,
    }


def _special(
    b: _BP,
    process: str,
    acts: dict[str, Any],
    chans: dict[str, Any],
    modes: list[str],
    job_names: list[str],
    job_stage: Any,
    prep_label: str,
) -> list[dict[str, Any]]:
    names = list(chans)
    p = names[0]
    if process == "contract":
        c = b.get("contract", required=True)
        dele = acts.pop(f"delegate_{p}")
        acts[f"contract_default_{p}"] = {
            **dele,
            "kind": "contract",
            "label": f"{dele['label']} under the default contract (you bear the full loss)",
        }
        acts[f"contract_performance_{p}"] = {
            **dele,
            "kind": "contract",
            "success_fee": b.num("contract.performance_fee"),
            "loss_share": b.num("contract.performance_share", hi=1.0),
            "label": f"{dele['label']} under a performance contract (pay {_fmt(b.num('contract.performance_fee'))} on success; you bear {_fmt(100 * b.num('contract.performance_share', hi=1.0))}% of a failure's loss)",
        }
        acts[f"contract_guaranteed_{p}"] = {
            **dele,
            "kind": "contract",
            "fee": b.num("contract.guaranteed_fee"),
            "loss_share": 0.0,
            "label": f"{dele['label']} under a guaranteed contract (fee {_fmt(b.num('contract.guaranteed_fee'))}; the partner covers any loss)",
        }
        del c
        names_now = [n for n in acts if n not in ("backup",)] + ["backup"]
        return [job_stage(i, names_now) for i in (1, 2, 3)]
    if process in ("disclosure", "communication"):
        key = "disclosure" if process == "disclosure" else "assurance"
        spec = b.get(key, required=True)
        good_says = b.num(f"{key}.good_says", hi=1.0)
        bad_says = b.num(f"{key}.bad_says", hi=1.0)
        say = str(
            spec.get("says", "reports a clean record" if process == "disclosure" else "promises to deliver")
        )
        quiet = str(
            spec.get("otherwise", "declines to disclose" if process == "disclosure" else "makes no promise")
        )
        ask = f"ask_{p}"
        acts[ask] = {
            "kind": "disclose" if process == "disclosure" else "message",
            "label": f"{spec.get('label', 'ask ' + chans[p]['label'])} (fee {_fmt(b.num(f'{key}.fee', 0.0))})",
            "fee": b.num(f"{key}.fee", 0.0),
            "signal": {
                "channel": p,
                "name": f"{process}_{p}",
                "outcomes": {
                    say: {modes[0]: good_says, modes[1]: bad_says},
                    quiet: {modes[0]: 1 - good_says, modes[1]: 1 - bad_says},
                },
            },
            "counterpart": "skip",
        }
        acts["skip"] = {"kind": "skip", "label": "do not ask; go straight to the jobs"}
        return [
            {"job": prep_label, "loss": 0, "actions": [ask, "skip"]},
            job_stage(1, job_names),
            job_stage(2, job_names),
        ]
    if process == "commitment":
        fee = b.num("commitment.fee")
        per = b.num("commitment.per_job_fee")
        dele = acts[f"delegate_{p}"]
        dele["fee"] = per
        dele["label"] = f"{dele['label']} for this job only (fee {_fmt(per)})"
        committed = f"delegate_{p}_committed"
        acts[f"commit_{p}"] = {
            **dele,
            "kind": "commit",
            "fee": fee,
            "lock": [committed],
            "label": f"commit to {chans[p]['label']} for all three jobs (one fee {_fmt(fee)} now; no switching later)",
        }
        acts[committed] = {
            **dele,
            "kind": "delegate",
            "fee": 0.0,
            "locked_only": True,
            "label": f"give the job to {chans[p]['label']} as committed",
        }
        first = [*job_names, f"commit_{p}"]
        later = [*job_names, committed]
        return [job_stage(1, first), job_stage(2, later), job_stage(3, later)]
    b.fail("processes", f"unknown specialised process {process!r}")
    return []
