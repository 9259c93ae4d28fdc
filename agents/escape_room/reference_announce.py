"""The reference moderator's announcements and end-of-game summary, rebuilt from trustsim's round reports.

The reference names a capsule by its creator and endorsers (``Q1-A+B``, games/moderator.py:428-437);
trustsim keeps the creator's label and the endorsers apart, so :func:`grown_label` joins them. A round's
announcement lists only verification results, the volunteer's result or the no-volunteer victim
(moderator.py:26-107): passes are not announced (unless ``announce_passes``, a trustsim option).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.escape_room import reference_prompt as rp
from agents.escape_room.reference_parse import match_capsule
from games.escape_room.types import CapsuleView, GameSummary, Observation, RoundReport


def grown_label(capsule: CapsuleView) -> str:
    """``Q1-A`` endorsed by B then C reads ``Q1-A+B+C`` (creator first, then endorsers in order)."""
    return capsule.label + "".join(f"+{e}" for e in capsule.endorsers[1:])


def grown_labels(capsules: Mapping[int, Sequence[CapsuleView]]) -> dict[int, list[str]]:
    return {k: [grown_label(c) for c in capsules[k]] for k in sorted(capsules)}


def round_announcement(report: RoundReport, start: Observation, announce_passes: bool = False) -> str:
    """The moderator's announcement of a round (moderator.py:26-107), from the state at its start."""
    caps: dict[int, list[list[str]]] = {
        k: [[c.label, *c.endorsers] for c in start.capsules[k]] for k in sorted(start.capsules)
    }
    coins = dict(start.coins)
    alive = [s for s in start.alive if s not in {seat for seat, _ in report.deaths}]

    def grown(entry: list[str]) -> str:
        return entry[0] + "".join(f"+{e}" for e in entry[2:])

    msg = ""
    if report.verifications:
        msg = rp.verifications_header()
        for v in report.verifications:
            before = coins[v.seat]
            after = max(0, before - 1)
            coins[v.seat] = after
            entries = caps.setdefault(v.puzzle, [])
            if v.created:
                entries.append([v.capsule, v.seat])
                msg += rp.created_line(v.seat, grown(entries[-1]), before, after)
                continue
            entry = next((e for e in entries if e[0] == v.capsule), None)
            if entry is None:  # not in the start-of-round table: opened earlier this round
                entry = [v.capsule, v.seat]
                entries.append(entry)
            old = grown(entry)
            if v.seat in entry[1:]:
                msg += rp.already_line(v.seat, old)
                continue
            entry.append(v.seat)
            msg += rp.agrees_line(v.seat, old, grown(entry), before, after)
    if report.chosen_volunteer:
        text = _password_text(report, {k: [grown(e) for e in v] for k, v in caps.items()}, caps, alive)
        out = msg + "\n" + text if msg else text
    else:
        victims = [seat for seat, cause in report.deaths if cause == "no_volunteer"]
        out = msg + (rp.no_volunteer(victims[0], coins[victims[0]], alive) if victims else "")
    if announce_passes:
        passed = [s for s, a in report.actions.items() if a == "Pass"]
        if passed:
            out += f"\nPassed: {', '.join(passed)}"
    return out


def _password_text(
    report: RoundReport,
    labels: Mapping[int, list[str]],
    caps: Mapping[int, list[list[str]]],
    alive: Sequence[str],
) -> str:
    """moderator.py:109-197: the first problem of the selection in question order, else the result."""
    seat = report.chosen_volunteer or "?"
    password = report.password or {}
    if not password:
        return rp.selection_invalid(seat, alive)
    shown: list[str] = []
    for k in sorted(labels):
        if k not in password:
            return rp.selection_missing(seat, f"Q{k}", alive)
        selected = password[k]
        base = next((e for e in caps.get(k, []) if e[0] == selected), None)
        if base is not None:
            shown.append(base[0] + "".join(f"+{e}" for e in base[2:]))
            continue
        hit = match_capsule(labels[k], selected)
        if hit is None:
            return rp.selection_unknown(seat, selected, alive)
        shown.append(hit)
    if report.password_correct:
        return rp.password_correct(seat, shown)
    return rp.password_wrong(seat, shown, alive)


def end_of_game(summary: GameSummary) -> str:
    """escape_room.py:334-369: outcome, winner, survivors, every seat's final coins (0 when dead)."""
    survivors = list(summary.survivors)
    if summary.escaped:
        outcome = "SUCCESS"
    elif not survivors:
        outcome = "ALL_DEAD"
    else:
        outcome = "MAX_ROUNDS"
    winner = next((r.chosen_volunteer for r in summary.reports if r.password_correct), None)
    coins = {s: (c if s in survivors else 0) for s, c in summary.coins.items()}
    return rp.game_resolution(summary.game, outcome, winner, survivors, coins, summary.rounds)
