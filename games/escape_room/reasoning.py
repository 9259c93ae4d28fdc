"""The escape room's reasoning texts for post-hoc confidence extraction (``python -m trustsim.extract``):
trustsim escape-room run directories (``--kind escape_room``) and the shared escape-room-v2 reference logs
(``--kind escape_room_reference``, the default). Declared as ``GameSpec.reasoning``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from trustsim.contract import ReasoningSource
from trustsim.extract.items import ReasoningItem
from trustsim.extract.sources import SourceError, run_events

SCHEDULE_TOKENS = ("mid2strike", "3strike", "2strike", "1strike", "recovery", "recur", "smooth", "dcorrect")
_REASONING = re.compile(r"REASONING:\s*(.*)", re.DOTALL | re.IGNORECASE)
PARTNER_SEAT = "D"


def _schedule(name: str) -> str:
    low = name.lower()
    for token in SCHEDULE_TOKENS:
        if token in low:
            return {"recovery": "1strike", "dcorrect": "anchor"}.get(token, token)
    return ""


def reference_runs(root: Path) -> list[Path]:
    """Escape-room-v2 run folders (those holding ``experiment_settings.json``) under ``root``, sorted."""
    if not root.exists():
        raise SourceError(f"{root}: no such directory")
    return sorted(p.parent for p in root.rglob("experiment_settings.json"))


def escape_room_reference(run_dir: Path) -> Iterator[ReasoningItem]:
    """Items from one escape-room-v2 run folder: every reasoning text of seats A, B, C.

    The question is whether the scripted partner D's capsule (puzzle Q4) holds the right answer; the
    outcome is D's correctness in that game (``correctness_list[g-1]``; a missing entry meant D was wrong,
    as in the reference). Cluster = the run folder (one session).
    """
    settings_path = run_dir / "experiment_settings.json"
    try:
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SourceError(f"{settings_path}: unreadable ({exc})") from None
    correctness = _correctness_list(settings)
    memory = "none" if "memoryless" in run_dir.name.lower() else "transcript"
    schedule = _schedule(run_dir.name)
    for g, path in enumerate(sorted(run_dir.glob("game_*.json")), start=1):
        try:
            game = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SourceError(f"{path}: unreadable ({exc})") from None
        d_correct = bool(correctness[g - 1]) if g - 1 < len(correctness) else False
        models = {
            seat: str(entry.get("model", "")) for seat, entry in (game.get("agents_config") or {}).items()
        }
        for rnd in game.get("rounds") or []:
            for seat, raw in sorted((rnd.get("reasoning") or {}).items()):
                if seat == PARTNER_SEAT or not isinstance(raw, str) or not raw.strip():
                    continue
                m = _REASONING.search(raw)
                text = (m.group(1) if m else raw).strip()
                yield ReasoningItem(
                    text=text,
                    question=(
                        "that the answer in player D's capsule for puzzle Q4 is correct (player D is the "
                        "partner whose answer the writer cannot check without paying to verify it)"
                    ),
                    outcome=int(d_correct),
                    row={
                        "run_id": run_dir.name,
                        "game_type": "escape_room",
                        "cluster": "s0",
                        "model": models.get(seat, ""),
                        "agent": "llm",
                        "memory": memory,
                        "schedule": schedule,
                        "subject": PARTNER_SEAT,
                        "subject_kind": "scripted_partner",
                        "game": g,
                        "round": int(rnd.get("round", 0)),
                        "item": f"Q4:{seat}",
                    },
                )


def _correctness_list(settings: dict) -> list:
    for key in ("correctness_list", "d_correctness", "dummy_correctness"):
        if isinstance(settings.get(key), list):
            return settings[key]
    for value in settings.values():
        if isinstance(value, dict):
            found = _correctness_list(value)
            if found:
                return found
    return []


def escape_room_run(run_dir: Path) -> Iterator[ReasoningItem]:
    """Items from a trustsim escape-room run directory: every ``decision`` event with reasoning text.

    The question is whether the scripted partner's capsule holds the right answer; the outcome is the game's
    ``d_correct`` (from ``game_start``). Native confidence in the same run stays in its own source, so the
    two can be compared decision by decision.
    """
    opened = run_events(run_dir)
    if opened is None:
        return
    manifest, events = opened
    run_id = str(manifest.get("run_id") or run_dir.name)
    cell = manifest.get("cell") or {}
    starts: dict[tuple, dict] = {}
    for e in events:
        key = (e.get("session"), e.get("game"))
        if e.get("type") == "game_start":
            starts[key] = e
        elif e.get("type") == "decision" and (e.get("reasoning") or "").strip() and key in starts:
            start = starts[key]
            slot = int(start.get("partner_puzzle") or 4)
            yield ReasoningItem(
                text=e["reasoning"].strip(),
                question=(
                    f"that the answer in the partner's capsule for puzzle Q{slot} is correct (the partner's "
                    "answer cannot be checked without paying to verify it)"
                ),
                outcome=int(bool(start.get("d_correct"))),
                row={
                    "run_id": run_id,
                    "game_type": "escape_room",
                    "cluster": f"s{e.get('session')}",
                    "model": cell.get("model", ""),
                    "agent": cell.get("agent", ""),
                    "memory": cell.get("memory", ""),
                    "schedule": cell.get("schedule", ""),
                    "subject": PARTNER_SEAT,
                    "subject_kind": "scripted_partner",
                    "game": e.get("game"),
                    "round": e.get("round"),
                    "item": f"Q{slot}:{e.get('seat')}",
                },
            )


REASONING = {
    "escape_room_reference": ReasoningSource(escape_room_reference, find=reference_runs, default=True),
    "escape_room": ReasoningSource(escape_room_run),
}
"""``--kind`` name -> source: the reference logs (the default kind) and trustsim run directories."""
