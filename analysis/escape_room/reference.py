"""Import the reference study's raw logs (Escape-room-v2) into the tidy trust tables.

A reference run folder holds ``experiment_settings.json`` and ``game_<id>.json`` files (one per game,
in play order by id), read by :mod:`trustsim.rundir.reference_logs`. Conventions (documented in ``docs/analysis.md``):

- model: the first player's model with the provider prefix removed (``openai/gpt-5.1`` -> ``gpt-5.1``);
- memory: ``none`` when the agents' ``persist_across_games`` is false, ``transcript`` when true with no
  reflection, ``reflection`` when a reflection mode is set;
- D correctness of game *g*: ``correctness_list[g-1]``; a missing entry means D was wrong;
- schedule: inferred from the per-game correctness sequence (:func:`~analysis.escape_room.schedules.infer_schedule`);
- decisions: ``Verify: Qk`` -> verify(k); ``Volunteer: ...`` -> volunteer; ``Pass`` -> pass; anything else
  -> invalid. Verifying one's own puzzle is a verification, counted as the study counted it: the reference
  charged the coin and changed no capsule (``X already endorsed ...``); 6 such decisions exist in the shared
  logs (the engine's default ``game.own_verify=charge`` plays it the same way).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from analysis.escape_room.schedules import infer_schedule
from analysis.rundirs import DataWarning
from trustsim.rundir.reference_logs import (
    SETTINGS,
    LoggedGame,
    LoggedRun,
    ReferenceLogError,
    read_reference_run,
)

SEATS = ("A", "B", "C", "D")
PARTNER_SEAT = "D"
PARTNER_PUZZLE = 4
_VERIFY = re.compile(r"^\s*verify\s*:\s*q(\d+)\s*$", re.IGNORECASE)
_VOLUNTEER = re.compile(r"^\s*volunteer\s*:\s*(.*)$", re.IGNORECASE)
_PASS = re.compile(r"^\s*pass\s*$", re.IGNORECASE)
_CAPSULE = re.compile(r"(Q\d+)-([A-D+]+)")
# Settings keys that describe a run's identity rather than its configuration.
_IDENTITY_KEYS = {"experiment_name", "description", "output_settings"}
_OUTCOMES = {"SUCCESS": "escaped", "ALL_DEAD": "all_dead"}


def _strip_provider(model: str) -> str:
    for sep in ("/", ":"):
        if sep in model:
            model = model.split(sep, 1)[1]
    return model


def _memory(settings: dict[str, Any], seats: Iterable[str]) -> str:
    modes = set()
    for seat in seats:
        cfg = (settings.get("memory_config") or {}).get(seat) or {}
        evolving = str(cfg.get("reflection", "none")).lower() not in {"none", "", "false"}
        if not cfg.get("persist_across_games", False):
            modes.add("none")
        elif evolving:
            modes.add(
                "transcript_reflection" if cfg.get("mode", "max_allowed") == "max_allowed" else "reflection"
            )
        else:
            modes.add("transcript")
    if len(modes) != 1:
        raise ReferenceLogError(f"agents have different memory settings: {sorted(modes)}")
    return modes.pop()


def _config_key(settings: dict[str, Any], n_games: int) -> str:
    """Fingerprint of the configuration, excluding identity text and comments, plus the game count."""

    def clean(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: clean(v) for k, v in obj.items() if not str(k).startswith("_")}
        if isinstance(obj, list):
            return [clean(v) for v in obj]
        return obj

    body = {k: clean(v) for k, v in settings.items() if k not in _IDENTITY_KEYS}
    body.pop("dummy_config", None)  # the schedule is a cell key already
    body["played_games"] = n_games
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


def _parse_decision(text: str, seat: str) -> tuple[str, int | None, bool, str, str]:
    """(action, target, valid, invalid_reason, resolved_action) of a reference decision string."""
    if m := _VERIFY.match(text):
        target = int(m.group(1))
        if not 1 <= target <= len(SEATS):
            return "verify", target, False, "bad_target", "pass"
        return "verify", target, True, "", "verify"
    if _VOLUNTEER.match(text):
        return "volunteer", None, True, "", "volunteer"
    if _PASS.match(text):
        return "pass", None, True, "", "pass"
    return "invalid", None, False, "unparseable", "pass"


@dataclass
class ImportedRun:
    """Tidy rows of one reference run folder."""

    run: dict[str, Any]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)
    agent_games: list[dict[str, Any]] = field(default_factory=list)


def import_reference_run(path: str | os.PathLike[str] | LoggedRun) -> ImportedRun:
    """Read one reference run folder (or take it as read) into tidy rows.

    A damaged game file ends the run there (earlier games are kept, a :class:`DataWarning` names the file),
    because later games' memory depended on it.

    Raises:
        ReferenceLogError: When the settings are unreadable or the run has no readable game.
    """
    logged = path if isinstance(path, LoggedRun) else read_reference_run(path)
    folder, settings = logged.folder, logged.settings
    models = settings.get("player_models") or []
    if len(models) < len(SEATS):
        raise ReferenceLogError(f"{folder / SETTINGS}: player_models lists {len(models)} players, need 4")
    agent_seats = [s for s, m in zip(SEATS, models, strict=False) if str(m).lower() != "dummy"]
    if PARTNER_SEAT in agent_seats:
        raise ReferenceLogError(f"{folder / SETTINGS}: seat D is not the scripted 'dummy' partner")
    model_names = {_strip_provider(str(models[SEATS.index(s)])) for s in agent_seats}
    if len(model_names) != 1:
        raise ReferenceLogError(f"{folder / SETTINGS}: agents use different models {sorted(model_names)}")
    model = model_names.pop()
    memory = _memory(settings, agent_seats)
    d_list = ((settings.get("dummy_config") or {}).get(PARTNER_SEAT) or {}).get("correctness_list") or []

    games_json = logged.games
    if logged.damaged:
        warnings.warn(
            f"{logged.damaged}; keeping the {len(games_json)} games before it", DataWarning, stacklevel=2
        )
    if not games_json:
        raise ReferenceLogError(f"{folder}: no readable game file")
    d_correct = [bool(d_list[i]) if i < len(d_list) else False for i in range(len(games_json))]
    schedule = infer_schedule(d_correct, memoryless=memory == "none")
    run_id = f"ref:{folder.name}"
    keys = {
        "model": model,
        "schedule": schedule,
        "memory": memory,
        "partner_slot": "fixed",
        "agent": "llm",
        "prompt": "reference",  # the study's own prompts (trustsim's agent.prompt=reference reproduces them)
    }
    out = ImportedRun(
        run={
            "source": "reference",
            "run_id": run_id,
            "path": str(folder),
            **keys,
            "sessions": 1,
            "games": len(games_json),
            "config_key": _config_key(settings, len(games_json)),
            "status": "complete",
        }
    )
    for index, (game, dc) in enumerate(zip(games_json, d_correct, strict=True), start=1):
        _import_game(out, game, index, dc, run_id, keys)
    return out


def _import_game(
    out: ImportedRun,
    game: LoggedGame,
    index: int,
    d_correct: bool,
    run_id: str,
    keys: dict[str, str],
) -> None:
    base = {"source": "reference", "run_id": run_id, "session": 0, "game": index, **keys}
    rounds = game.rounds
    escaped = game.escaped
    escape_round = int(rounds[-1].raw.get("round", len(rounds))) if escaped and rounds else None
    seat_verifs = dict.fromkeys(SEATS, 0)
    death_round: dict[str, int] = {}
    death_cause: dict[str, str] = {}
    rounds_alive = dict.fromkeys(SEATS, 0)
    counts = dict.fromkeys(("verifications", "partner", "protective", "volunteers", "invalid"), 0)
    coins = dict.fromkeys(SEATS, 4)
    for rnd in rounds:
        r = int(rnd.raw.get("round", 0))
        for seat in rnd.alive:
            rounds_alive[seat] = rounds_alive.get(seat, 0) + 1
        for seat, text in rnd.decisions.items():
            action, target, valid, reason, resolved = _parse_decision(text, seat)
            if rnd.defaulted.get(seat) and action != "pass":
                valid, reason, resolved = False, reason or "defaulted_to_pass", "pass"
            is_partner = seat == PARTNER_SEAT
            verify_partner = resolved == "verify" and target == PARTNER_PUZZLE
            out.decisions.append(
                {
                    **base,
                    "round": r,
                    "seat": seat,
                    "is_partner": is_partner,
                    "d_correct": d_correct,
                    "partner_puzzle": PARTNER_PUZZLE,
                    "own_puzzle": SEATS.index(seat) + 1,
                    "action": action,
                    "target": target,
                    "valid": valid,
                    "invalid_reason": reason,
                    "resolved_action": resolved,
                    "verify_partner": verify_partner,
                }
            )
            if is_partner:
                continue
            if not valid:
                counts["invalid"] += 1
            if resolved == "verify":
                seat_verifs[seat] += 1
                counts["verifications"] += 1
                counts["partner"] += verify_partner
                if escape_round is not None and r < escape_round:
                    counts["protective"] += 1
            elif resolved == "volunteer":
                counts["volunteers"] += 1
        for seat, why in rnd.death_reasons.items():
            death_round[seat] = r
            death_cause[seat] = why
        for seat, status in rnd.statuses.items():
            if isinstance(status, dict) and "coins" in status:
                coins[seat] = int(status["coins"])
    survivors = game.survivors
    out.games.append(
        {
            **base,
            "seed": None,
            "d_correct": d_correct,
            "partner_puzzle": PARTNER_PUZZLE,
            "outcome": _OUTCOMES.get(game.outcome, "max_rounds"),
            "escaped": escaped,
            "rounds": len(rounds),
            "escape_round": escape_round,
            "verifications": counts["verifications"],
            "partner_verifications": counts["partner"],
            "protective_verifications": counts["protective"],
            "volunteers": counts["volunteers"],
            "deaths_wrong_password": sum(c == "wrong_password" for c in death_cause.values()),
            "deaths_no_volunteer": sum(c == "no_volunteer" for c in death_cause.values()),
            "survivors": ";".join(sorted(survivors)),
            "invalid": counts["invalid"],
        }
    )
    for seat in SEATS:
        survived = seat in survivors
        out.agent_games.append(
            {
                **base,
                "seat": seat,
                "is_partner": seat == PARTNER_SEAT,
                "d_correct": d_correct,
                "survived": survived,
                "death_cause": death_cause.get(seat, ""),
                "death_round": death_round.get(seat),
                "rounds_alive": rounds_alive.get(seat, 0),
                "coins": coins.get(seat, 0),
                "score": coins.get(seat, 0) if (escaped and survived) else 0,
                "verifications": seat_verifs[seat],
            }
        )
    if seat_verifs[PARTNER_SEAT]:
        warnings.warn(f"{run_id} game {index}: the partner D verified", DataWarning, stacklevel=3)
