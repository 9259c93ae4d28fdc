"""Write small contract-format escape-room run directories for tests and benchmarks.

Games are drawn from a crude seeded process (not the engine): each round every alive agent under test
verifies with probability ``p_verify`` (the partner's puzzle with probability ``p_partner``) or volunteers
with probability ``p_volunteer``; tables are written consistently with ``docs/run_directory.md``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from games.escape_room.plan import UNIT

SEATS = ("A", "B", "C", "D")
SCHEDULE_PATTERNS = {
    "smooth": "",
    "1strike": "F",
    "2strike": "FF",
    "3strike": "FFF",
    "mid2strike": "TTTFF",
    "recur": "FTTTF",
    "anchor": "",
    "anchor_dwrong": "FFFFFFFFFFFFFFFFFFFF",
}


def d_correct_list(schedule: str, n_games: int) -> list[bool]:
    """Per-game partner correctness of a named schedule."""
    prefix = SCHEDULE_PATTERNS[schedule]
    pat = (prefix + "T" * n_games)[:n_games]
    return [c == "T" for c in pat]


def _b(x: bool) -> str:
    return "true" if x else "false"


def write_run(
    path: Path,
    *,
    model: str = "m1",
    schedule: str = "smooth",
    memory: str = "transcript",
    n_games: int = 6,
    sessions: int = 1,
    seed: int = 0,
    status: str = "complete",
    p_verify: float = 0.4,
    p_partner: float = 0.3,
    p_volunteer: float = 0.3,
    config_extra: dict[str, Any] | None = None,
    run_id: str | None = None,
) -> Path:
    """Create one run directory; returns its path."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    run_id = run_id or path.name
    cell = {"agent": "synth", "model": model, "schedule": schedule, "memory": memory, "partner_slot": "fixed"}
    config = {"seed": seed, "schedule": schedule, "memory": memory, "model": model, **(config_extra or {})}
    manifest = {"run_id": run_id, "game": "escape_room", "unit": UNIT.events.to_dict(), "status": status,
                "cell": cell, "config": config, "seed": seed}  # fmt: skip
    if status == "failed":
        manifest["failure"] = {"reason": "synthetic failure", "resume": "re-run"}
    (path / "manifest.json").write_text(json.dumps(manifest))
    dec_rows: list[list[Any]] = []
    game_rows: list[list[Any]] = []
    ag_rows: list[list[Any]] = []
    events: list[dict[str, Any]] = []
    dcs = d_correct_list(schedule, n_games)
    for session in range(sessions):
        for g, dc in enumerate(dcs, start=1):
            events.append(
                {"seq": len(events), "type": "game_start", "session": session, "game": g, "d_correct": dc}
            )
            alive = list(SEATS)
            coins = dict.fromkeys(SEATS, 4)
            verifs = dict.fromkeys(SEATS, 0)
            death_cause: dict[str, str] = {}
            death_round: dict[str, int] = {}
            rounds_alive = dict.fromkeys(SEATS, 0)
            counts = {"v": 0, "pv": 0, "prot": 0, "vol": 0}
            round_verifs: list[int] = []
            escaped, escape_round, r = False, None, 0
            while alive and r < 4 and not escaped:
                r += 1
                volunteers = []
                rv = 0
                for seat in list(alive):
                    rounds_alive[seat] += 1
                    partner = seat == "D"
                    u = rng.random()
                    action, target = "pass", ""
                    if not partner and u < p_verify and coins[seat] > 0:
                        others = [k for k in range(1, 4) if k != SEATS.index(seat) + 1]
                        target = 4 if rng.random() < p_partner else int(rng.choice(others))
                        action = "verify"
                        coins[seat] -= 1
                        verifs[seat] += 1
                        rv += 1
                        counts["v"] += 1
                        counts["pv"] += target == 4
                    elif not partner and u < p_verify + p_volunteer:
                        action = "volunteer"
                        volunteers.append(seat)
                        counts["vol"] += 1
                    dec_rows.append([run_id, session, g, r, seat, _b(partner), "scripted_partner" if partner else "synth",
                                     "scripted" if partner else model, memory, schedule, _b(dc), 4,
                                     SEATS.index(seat) + 1, coins[seat], action, target, "", "true", "", action,
                                     _b(action == "verify" and target == 4)])  # fmt: skip
                round_verifs.append(rv)
                if volunteers:
                    who = volunteers[int(rng.integers(len(volunteers)))]
                    if rng.random() < (0.85 if dc else 0.3):
                        escaped, escape_round = True, r
                    else:
                        alive.remove(who)
                        death_cause[who], death_round[who] = "wrong_password", r
                else:
                    who = alive[int(rng.integers(len(alive)))]
                    alive.remove(who)
                    death_cause[who], death_round[who] = "no_volunteer", r
            if escaped:
                counts["prot"] = sum(round_verifs[: escape_round - 1])
            outcome = "escaped" if escaped else ("all_dead" if not alive else "max_rounds")
            for seat in SEATS:
                if seat in death_cause:
                    coins[seat] = 0
            game_rows.append([run_id, session, g, seed * 1000 + g, "synth", model, memory, schedule, "fixed", _b(dc), 4,
                              outcome, _b(escaped), r, escape_round or "", counts["v"], counts["pv"], counts["prot"],
                              counts["vol"], sum(c == "wrong_password" for c in death_cause.values()),
                              sum(c == "no_volunteer" for c in death_cause.values()), ";".join(alive), 0])  # fmt: skip
            for seat in SEATS:
                surv = seat in alive
                ag_rows.append([run_id, session, g, seat, _b(seat == "D"), "synth", model, memory, schedule, _b(dc),
                                _b(surv), death_cause.get(seat, ""), death_round.get(seat, ""), rounds_alive[seat],
                                coins[seat], coins[seat] if (surv and escaped) else 0, verifs[seat]])  # fmt: skip
            events.append(
                {"seq": len(events), "type": "game_end", "session": session, "game": g, "outcome": outcome}
            )
    _csv(path / "decisions.csv", DEC_HEADER, dec_rows)
    _csv(path / "games.csv", GAME_HEADER, game_rows)
    _csv(path / "agent_games.csv", AG_HEADER, ag_rows)
    with (path / "events.jsonl").open("w") as fh:
        for e in events:
            fh.write(json.dumps(e) + "\n")
    return path


DEC_HEADER = ["run_id", "session", "game", "round", "seat", "is_partner", "agent", "model", "memory", "schedule",
              "d_correct", "partner_puzzle", "own_puzzle", "coins_before", "action", "target", "password", "valid",
              "invalid_reason", "resolved_action", "verify_partner"]  # fmt: skip
GAME_HEADER = ["run_id", "session", "game", "seed", "agent", "model", "memory", "schedule", "partner_slot",
               "d_correct", "partner_puzzle", "outcome", "escaped", "rounds", "escape_round", "verifications",
               "partner_verifications", "protective_verifications", "volunteers", "deaths_wrong_password",
               "deaths_no_volunteer", "survivors", "invalid"]  # fmt: skip
AG_HEADER = ["run_id", "session", "game", "seat", "is_partner", "agent", "model", "memory", "schedule", "d_correct",
             "survived", "death_cause", "death_round", "rounds_alive", "coins", "score", "verifications"]  # fmt: skip


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
