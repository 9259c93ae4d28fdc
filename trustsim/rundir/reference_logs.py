"""The reference study's logs (Escape-room-v2): the one reader of their folders and ``game_*.json`` files.

A reference run folder holds ``experiment_settings.json`` and one ``game_<id>.json`` per game, in play order
by file name. :func:`read_reference_run` reads a folder: its settings (unreadable settings are a
:class:`ReferenceLogError`) and its games up to the first unreadable one (``damaged`` names it: later games'
memory depended on it, so they are left out). :class:`LoggedGame` and :class:`LoggedRound` give the logged
fields by name; what a field means is for the reader's caller (the trust import, the yardstick's traces, the
viewer, the conformance replay).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SETTINGS = "experiment_settings.json"


class ReferenceLogError(ValueError):
    """A reference-study log folder is unreadable or inconsistent."""


def find_reference_runs(root: str | os.PathLike[str]) -> list[Path]:
    """All reference run folders under ``root`` (itself included), sorted."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(Path(root)):
        if SETTINGS in filenames and any(f.startswith("game_") and f.endswith(".json") for f in filenames):
            found.append(Path(dirpath))
            dirnames[:] = []
        else:
            dirnames.sort()
    return sorted(found)


def read_json(path: Path) -> dict[str, Any]:
    """One JSON object; a :class:`ReferenceLogError` naming the file when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ReferenceLogError(f"{path}: unreadable ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ReferenceLogError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise ReferenceLogError(f"{path}: expected a JSON object")
    return data


@dataclass(frozen=True)
class LoggedRound:
    """One entry of a game's ``rounds`` (``index``: its position, from 0)."""

    raw: dict[str, Any]
    index: int

    @property
    def number(self) -> int:
        """The logged round number (its position + 1 when missing)."""
        return int(self.raw.get("round", self.index + 1))

    @property
    def decisions(self) -> dict[str, str]:
        """Seat → the decision text as logged (``Verify: Q2``, ``Volunteer: ...``, ``Pass``)."""
        return {str(k): str(v) for k, v in (self.raw.get("decisions") or {}).items()}

    @property
    def alive_logged(self) -> list[str]:
        """``alive_agents`` as logged (empty when missing)."""
        return [str(s) for s in self.raw.get("alive_agents") or []]

    @property
    def alive(self) -> list[str]:
        """The seats alive at the start of the round: ``alive_agents``, else the seats that decided."""
        return self.alive_logged or list(self.decisions)

    @property
    def defaulted(self) -> dict[str, bool]:
        """Seat → whether its answer was unusable and defaulted to a pass."""
        return {str(k): bool(v) for k, v in (self.raw.get("defaulted_to_pass") or {}).items()}

    @property
    def reasoning(self) -> dict[str, str]:
        """Seat → the model's full answer text."""
        return {str(k): str(v or "") for k, v in (self.raw.get("reasoning") or {}).items()}

    @property
    def outcome(self) -> str:
        """The round's announcement text."""
        return str(self.raw.get("outcome") or "")

    @property
    def death_reasons(self) -> dict[str, str]:
        """Seat → why it died this round."""
        return {str(k): str(v) for k, v in (self.raw.get("death_reasons") or {}).items()}

    @property
    def statuses(self) -> dict[str, Any]:
        """Seat → its status after the round (``agent_statuses``: coins, answer, ...)."""
        return dict(self.raw.get("agent_statuses") or {})

    @property
    def coins(self) -> dict[str, int]:
        """Seat → coins after the round, where the status logs them as an integer."""
        return {
            str(seat): status["coins"]
            for seat, status in self.statuses.items()
            if isinstance(status, dict) and isinstance(status.get("coins"), int)
        }

    @property
    def capsule_status(self) -> dict[str, Any]:
        """``Q<k>:<answer>`` → the capsules after the round (``[label, answer text]`` each)."""
        return dict(self.raw.get("capsule_status") or {})


@dataclass(frozen=True)
class LoggedGame:
    """One ``game_*.json`` (``index``: its place in the run, from 1)."""

    path: Path
    index: int
    data: dict[str, Any]

    @property
    def rounds(self) -> list[LoggedRound]:
        """The logged rounds, in order."""
        return [LoggedRound(r, i) for i, r in enumerate(self.data.get("rounds") or [])]

    @property
    def game_id(self) -> str:
        """The logged ``game_id`` (else the file name's)."""
        return str(self.data.get("game_id", self.path.stem.removeprefix("game_")))

    @property
    def escaped(self) -> bool:
        """Whether the team escaped (``game_outcome`` ``SUCCESS``)."""
        return self.outcome == "SUCCESS"

    @property
    def outcome(self) -> str:
        """``game_outcome``, upper case (``SUCCESS``, ``ALL_DEAD``, ...)."""
        return str(self.data.get("game_outcome", "")).upper()

    @property
    def survivors(self) -> list[str]:
        """The seats alive at the end."""
        return [str(s) for s in self.data.get("survivors") or []]

    @property
    def agents_config(self) -> dict[str, Any]:
        """Seat → its puzzle and sealed answer as configured for this game."""
        return dict(self.data.get("agents_config") or {})


@dataclass
class LoggedRun:
    """One reference run folder: its settings and its readable games, in play order."""

    folder: Path
    settings: dict[str, Any]
    games: list[LoggedGame] = field(default_factory=list)
    damaged: str = ""  # why the first unreadable game file could not be read (later games left out)


def read_reference_run(folder: str | os.PathLike[str]) -> LoggedRun:
    """Read one reference run folder (see the module docstring).

    Raises:
        ReferenceLogError: When the settings are unreadable.
    """
    folder = Path(folder)
    run = LoggedRun(folder, read_json(folder / SETTINGS))
    for index, path in enumerate(sorted(folder.glob("game_*.json")), start=1):
        try:
            run.games.append(LoggedGame(path, index, read_json(path)))
        except ReferenceLogError as exc:
            run.damaged = str(exc)
            break
    return run
