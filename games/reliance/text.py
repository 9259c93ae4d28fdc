"""Natural-language rendering: the public rules of a scenario, observations, history and the posterior."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.reliance.beliefs import NONE_OBS
from games.reliance.rules import Action, Scenario


def _p(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x not in (0.0, 1.0) else f"{x:.0f}"


def _money(x: float) -> str:
    return f"{x:g}"


def _kernel_text(kernel: Mapping[str, Mapping[str, float]], modes: Sequence[str]) -> str:
    parts = []
    for m in modes:
        row = kernel[m]
        if row[m] == 1.0:
            parts.append(f"if {m} it stays {m}")
        else:
            moves = ", ".join(f"{n} with probability {_p(row[n])}" for n in modes if row[n] > 0)
            parts.append(f"if {m} it becomes {moves}")
    return "; ".join(parts)


def action_rules(scn: Scenario, a: Action) -> str:
    """One line describing an action's fees, reliance, information and effects."""
    bits = [f"{a.name}: {a.label}."]
    if a.fee and "fee" not in a.label.lower():
        bits.append(f"Fee {_money(a.fee)}.")
    if a.success_fee:
        bits.append(f"Pays {_money(a.success_fee)} on success.")
    if a.rely:
        rule = {"single": "", "conjunctive": " (the job succeeds only if every relied-on part succeeds)", "disjunctive": " (the job succeeds if any relied-on part succeeds)"}[a.combine]  # fmt: skip
        succ = "; ".join(
            f"{scn.channel(ch).label} succeeds with probability "
            + " / ".join(f"{_p(a.success[ch][m])} if {m}" for m in scn.channel(ch).modes)
            for ch in a.rely
        )
        bits.append(f"Relies on {', '.join(scn.channel(ch).label for ch in a.rely)}{rule}: {succ}.")
        if a.common_fail:
            bits.append(
                f"With probability {_p(a.common_fail)} a common cause makes every part fail together."
            )
    elif a.success_prob is not None:
        bits.append(f"Succeeds with probability {_p(a.success_prob)}.")
    if a.does_job and a.loss_share < 1:
        bits.append(f"You bear {_p(a.loss_share)} of the loss if it fails.")
    if a.does_job:
        fb = {"channels": "you see whether each relied-on part succeeded", "joint": "you see only whether the whole job succeeded", "none": "you learn nothing about how it went"}[a.feedback]  # fmt: skip
        bits.append(
            f"Afterwards {fb}"
            + (" — but only after the next decision." if a.delay and a.feedback != "none" else ".")
        )
    if a.signal is not None:
        modes = scn.channel(a.signal.channel).modes
        outs = "; ".join(
            f"'{lab}' with probability " + " / ".join(f"{_p(row[m])} if {m}" for m in modes)
            for lab, row in a.signal.outcomes.items()
        )
        bits.append(f"Reveals a signal about {scn.channel(a.signal.channel).label}: {outs}.")
    for e in a.effects:
        ch = scn.channel(e.channel)
        bits.append(f"Afterwards {ch.label} changes: {_kernel_text(e.kernel, ch.modes)}.")
    if a.lock is not None:
        bits.append(f"Afterwards only {', '.join(a.lock)} is allowed.")
    return " ".join(bits)


def rules_text(scn: Scenario) -> str:
    """The public rules: channels, priors, stages, losses, actions and transitions."""
    lines = [scn.setting.strip(), "", "Rules (all probabilities are public):"]
    names = scn.channel_names
    independent = _is_independent(scn)
    for c in scn.channels:
        line = f"- {c.label} ({c.name}) is in one of the modes {', '.join(c.modes)}."
        if independent:
            marg = {m: sum(p for j, p in scn.prior.items() if j[names.index(c.name)] == m) for m in c.modes}
            line += " Prior: " + ", ".join(f"{m} {_p(marg[m])}" for m in c.modes) + "."
        lines.append(line)
    if not independent:
        lines.append(
            "- Joint prior over modes (" + ", ".join(names) + "): "
            + "; ".join(f"{'/'.join(j)} {_p(p)}" for j, p in scn.prior.items() if p > 0) + "."
        )  # fmt: skip
    for i, st in enumerate(scn.stages, 1):
        loss = f"a failure costs {_money(st.loss)}" if st.loss > 0 else "no job, no loss"
        lines.append(f"- Stage {i}: {st.job} ({loss}). Options: {', '.join(st.actions)}.")
    for t in scn.transitions:
        ch = scn.channel(t.channel)
        lines.append(
            f"- After stage {t.after}: {t.text} ({ch.label}: {_kernel_text(t.kernel, ch.modes)}).".replace(
                " .", "."
            )
        )
    lines.append("Options:")
    lines.extend(f"- {action_rules(scn, scn.actions[n])}" for n in scn.actions)
    lines.append(
        "Costs add up over the stages (fees plus losses); your goal is the lowest expected total cost."
    )
    return "\n".join(lines)


def _is_independent(scn: Scenario) -> bool:
    names = scn.channel_names
    margs = [
        {m: sum(p for j, p in scn.prior.items() if j[i] == m) for m in scn.channels[i].modes}
        for i in range(len(names))
    ]
    for j, p in scn.prior.items():
        q = 1.0
        for i, m in enumerate(j):
            q *= margs[i][m]
        if abs(p - q) > 1e-9:
            return False
    return True


def observation_text(scn: Scenario, obs: str) -> str:
    """Human-readable form of an observation key such as ``P:success,Q:failure; test_P:pass``."""
    if obs == NONE_OBS:
        return "nothing observed"
    out = []
    for part in obs.split("; "):
        late = part.startswith("late[")
        body = part[5:-1] if late else part
        words = []
        for item in body.split(","):
            head, _, val = item.partition(":")
            if head == "job":
                words.append(f"the job {'succeeded' if val == 'success' else 'failed'}")
            elif head in scn.channel_names:
                words.append(f"{scn.channel(head).label} {'succeeded' if val == 'success' else 'failed'}")
            else:
                words.append(f"{head.replace('_', ' ')} result: {val}")
        text = ", ".join(words)
        out.append(f"late report on the previous stage: {text}" if late else text)
    return "; ".join(out)


def posterior_text(
    scn: Scenario,
    marginals: Mapping[str, Mapping[str, float]],
    joint: Mapping[tuple[str, ...], float] | None = None,
) -> str:
    """The exact posterior per channel (belief-support variant); the joint posterior is added when the
    channels' modes are dependent under it."""
    text = "; ".join(
        f"{scn.channel(ch).label}: " + ", ".join(f"P({m}) = {p:.3f}" for m, p in dist.items())
        for ch, dist in marginals.items()
    )
    if joint is not None and len(scn.channels) > 1:
        names = scn.channel_names
        dependent = any(abs(p - _product(marginals, names, modes)) > 1e-9 for modes, p in joint.items())
        if dependent:
            text += (
                "; jointly ("
                + ", ".join(names)
                + "): "
                + ", ".join(f"{'/'.join(modes)} {p:.3f}" for modes, p in joint.items())
            )
    return text


def _product(
    marginals: Mapping[str, Mapping[str, float]], names: Sequence[str], modes: Sequence[str]
) -> float:
    out = 1.0
    for ch, m in zip(names, modes, strict=True):
        out *= marginals[ch][m]
    return out
