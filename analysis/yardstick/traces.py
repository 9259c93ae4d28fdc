"""Escape-room games round by round, as the seats saw them, from engine events or the reference study's logs.

Two sources, one shape (:class:`GameTrace`): trustsim run directories (``events.jsonl``, read through the
project's one reader :mod:`trustsim.rundir` via :mod:`analysis.rundirs`, with its damage rule) and the
reference study's ``game_*.json`` logs (read by :mod:`trustsim.rundir.reference_logs`). Each round
holds the public state at its start (alive seats, coins, capsules with their creator and endorsers) and what
the round announced (decisions, verifications, the submitted password and whether it was right).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.rundirs import DataWarning, Run, RunDirError, iter_events, read_table, scan_events
from trustsim.rundir.reference_logs import LoggedGame, find_reference_runs, read_reference_run

SEATS = ("A", "B", "C", "D")
PARTNER = "D"
_Q = re.compile(r"Q(\d+)")


def _puzzle_index(label: str) -> int:
    """The puzzle a capsule label names (``Q3-AB`` → 3)."""
    m = _Q.match(label)
    if m is None:
        raise ValueError(f"not a capsule label: {label!r}")
    return int(m.group(1))


_NAME = re.compile(r"^(Q\d+-[A-Za-z0-9+,]*[A-Za-z0-9+])")


@dataclass
class Capsule:
    """A capsule's public face: its label, the seat that sealed or opened it, its endorsers in order."""

    label: str
    creator: str
    endorsers: list[str]


@dataclass
class Choice:
    """One seat's decision in a round: the resolved action (``pass``/``verify``/``volunteer``), the target of a
    verification, the capsule names of a volunteer's password (puzzle → name) and what was requested."""

    seat: str
    action: str
    target: int | None = None
    names: dict[int, str] | None = None
    requested: str = ""
    valid: bool = True


@dataclass
class Verification:
    """A verification's announcement: the capsule endorsed (or opened, ``created``) and its creator."""

    seat: str
    puzzle: int
    creator: str
    created: bool


@dataclass
class RoundTrace:
    """One round: the state the seats decided in, and what was announced."""

    number: int
    alive: list[str]
    coins: dict[str, int]
    capsules: dict[int, list[Capsule]]
    choices: list[Choice] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    password: dict[int, str] | None = None  # puzzle -> creator of the capsule the submitted password used
    correct: bool | None = None


@dataclass
class GameTrace:
    """One game. ``truth``: (puzzle, creator) → right, when the game revealed it (``reveal_after_game``)."""

    session: int
    game: int
    d_correct: bool
    owners: dict[int, str]
    max_rounds: int
    rounds: list[RoundTrace] = field(default_factory=list)
    truth: dict[tuple[int, str], bool] | None = None
    players: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # seat -> (agent, model) in a mixed team


@dataclass
class RunTrace:
    """A run's games and its cell keys."""

    source: str  # trustsim | reference
    run_id: str
    path: str
    model: str
    agent: str
    schedule: str
    memory: str
    team: str = ""  # a mixed team's composition (``A=never_verify;B=bayes;C=bayes``), empty for one agent
    own_verify: str = "charge"
    capsule_names: str = "lenient"
    games: list[GameTrace] = field(default_factory=list)


def _copy(capsules: dict[int, list[Capsule]]) -> dict[int, list[Capsule]]:
    return {k: [Capsule(c.label, c.creator, list(c.endorsers)) for c in caps] for k, caps in capsules.items()}


def capsule_names(text: str) -> list[str]:
    """The capsule names of a password text (``Q1-A, Q2-B+C, Q4-C,B``): items are separated by a comma and
    a space; a comma inside a name (``Q1-A,B``) belongs to the name."""
    out = []
    for item in re.split(r",\s+", text.strip()):
        if m := _NAME.match(item.strip()):
            out.append(m.group(1))
    return out


def parse_action(text: str | None) -> tuple[str, int | None, dict[int, str] | None]:
    """(kind, target, names) of an action text (``Pass``, ``Verify: Q2``, ``Volunteer: Q1-A, Q2-B, ...``)."""
    if not text:
        return "invalid", None, None
    low = text.strip().lower()
    if low.startswith("verify"):
        m = _Q.search(text)
        return "verify", (int(m.group(1)) if m else None), None
    if low.startswith("volunteer"):
        names: dict[int, str] = {}
        for name in capsule_names(text.split(":", 1)[1] if ":" in text else text):
            names.setdefault(_puzzle_index(name), name)
        return "volunteer", None, names
    if low.startswith("pass"):
        return "pass", None, None
    return "invalid", None, None


def resolve_name(capsules: list[Capsule], name: str, lenient: bool = True) -> Capsule | None:
    """The capsule a password's name selects (the engine's rule): the exact label; else (lenient) the first
    capsule created by a seat named after the dash, else the first one any named seat endorses."""
    for capsule in capsules:
        if capsule.label == name:
            return capsule
    if not lenient or "-" not in name:
        return None
    named = {s.strip() for s in re.split(r"[+,]", name.split("-", 1)[1]) if s.strip()}
    for capsule in capsules:
        if capsule.creator in named:
            return capsule
    for capsule in capsules:
        if named & set(capsule.endorsers):
            return capsule
    return None


# -- trustsim run directories -------------------------------------------------------------------------------
class _EngineGame:
    def __init__(self, start: dict[str, Any], max_rounds: int) -> None:
        owners = {int(q[1:]): str(p["owner"]) for q, p in (start.get("puzzles") or {}).items()}
        capsules: dict[int, list[Capsule]] = {k: [] for k in owners}
        for label in start.get("sealed") or {}:
            slot, _, creator = label.partition("-")
            capsules.setdefault(int(slot[1:]), []).append(Capsule(label, creator, [creator]))
        self.capsules = capsules
        self.trace = GameTrace(
            session=int(start.get("session", 0)),
            game=int(start["game"]),
            d_correct=bool(start.get("d_correct", True)),
            owners=owners,
            max_rounds=max_rounds,
        )

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        rounds = self.trace.rounds
        if kind == "round_start":
            rounds.append(
                RoundTrace(
                    number=int(event["round"]),
                    alive=[str(s) for s in event.get("alive", [])],
                    coins={str(s): int(c) for s, c in (event.get("coins") or {}).items()},
                    capsules=_copy(self.capsules),
                )
            )
        elif not rounds:
            return
        elif kind == "decision":
            requested, _, _ = parse_action(event.get("action"))
            action, target, names = parse_action(event.get("resolved"))
            rounds[-1].choices.append(
                Choice(
                    seat=str(event["seat"]),
                    action="pass" if action == "invalid" else action,
                    target=target,
                    names=names,
                    requested=requested,
                    valid=bool(event.get("valid", True)),
                )
            )
        elif kind == "verification":
            puzzle, seat, label = int(event["puzzle"]), str(event["seat"]), str(event["capsule"])
            caps = self.capsules.setdefault(puzzle, [])
            if event.get("created"):
                caps.append(Capsule(label, seat, [seat]))
                creator = seat
            else:
                match = next((c for c in caps if c.label == label), None)
                creator = match.creator if match else label.partition("-")[2].rstrip("0123456789")
                if match and seat not in match.endorsers:
                    match.endorsers.append(seat)
            rounds[-1].verifications.append(Verification(seat, puzzle, creator, bool(event.get("created"))))
        elif kind == "volunteer":
            password = event.get("password") or {}
            used = {}
            for k, label in password.items():
                match = next((c for c in self.capsules.get(int(k), []) if c.label == label), None)
                if match is not None:
                    used[int(k)] = match.creator
            rounds[-1].password = used
            rounds[-1].correct = bool(event.get("correct"))
        elif kind == "reveal":
            truth = {}
            for label, right in (event.get("capsules") or {}).items():
                for k, caps in self.capsules.items():
                    for c in caps:
                        if c.label == label:
                            truth[(k, c.creator)] = bool(right)
            self.trace.truth = truth


def _seat_players(run: Run) -> dict[int, dict[str, tuple[str, str]]]:
    """session -> seat -> (agent, model) from ``decisions.csv`` (a mixed team's seats differ)."""
    try:
        df = read_table(run, "decisions.csv", cell_keys=False, usecols=("session", "seat", "agent", "model"))
    except RunDirError as exc:
        warnings.warn(f"{exc}; using the run's cell for every seat", DataWarning, stacklevel=3)
        return {}
    if df is None or df.empty or not {"session", "seat", "agent", "model"} <= set(df.columns):
        return {}
    out: dict[int, dict[str, tuple[str, str]]] = {}
    for row in df.drop_duplicates(["session", "seat"]).itertuples(index=False):
        out.setdefault(int(row.session), {})[str(row.seat)] = (str(row.agent), str(row.model))
    return out


def engine_trace(run: Run) -> RunTrace:
    """A trustsim escape-room run directory as a :class:`RunTrace` (games whose events are cut off or damaged
    are left out, following the reader's damage rule)."""
    cfg = run.manifest.get("config") or {}
    game_cfg = cfg.get("game") or {}
    cell = run.cell
    n_seats = len(SEATS)
    max_rounds = int(game_cfg.get("max_rounds") or n_seats)
    trace = RunTrace(
        source="trustsim",
        run_id=run.run_id,
        path=str(run.path),
        model=str(cell.get("model") or ""),
        agent=str(cell.get("agent") or ""),
        schedule=str(cell.get("schedule") or ""),
        memory=str(cell.get("memory") or ""),
        team=str(cell.get("team") or ""),
        own_verify=str(game_cfg.get("own_verify") or "charge"),
        capsule_names=str(game_cfg.get("capsule_names") or "lenient"),
    )
    scan = scan_events(run)
    if not scan.present:
        warnings.warn(
            f"{scan.path}: {scan.problem}; the yardstick needs the events (the tables lack the capsule states), "
            "so it left this run out",
            DataWarning,
            stacklevel=2,
        )
        return trace
    intact = None if scan.ok else scan.intact_units()
    players = _seat_players(run) if trace.team else {}
    open_games: dict[tuple[int, int], _EngineGame] = {}
    dropped = 0
    for event in iter_events(run.path):
        if "game" not in event or "session" not in event:
            continue
        key = (int(event["session"]), int(event["game"]))
        kind = event.get("type")
        if kind == "game_start":
            open_games[key] = _EngineGame(event, max_rounds)
        elif kind == "game_end":
            game = open_games.pop(key, None)
            if game is None:
                continue
            if intact is None or f"s{key[0]}/{key[1]}" in intact:
                game.trace.players = players.get(key[0], {})
                trace.games.append(game.trace)
            else:
                dropped += 1
        elif key in open_games:
            open_games[key].add(event)
    if dropped:
        warnings.warn(
            f"{scan.where()}; the yardstick used the {len(trace.games)} game(s) of {run.path} whose events are intact "
            f"({dropped} left out)",
            DataWarning,
            stacklevel=2,
        )
    return trace


# -- the reference study's logs -------------------------------------------------------------------------------
_AGREE = re.compile(r"([A-D]) agrees with (Q(\d+)-[A-D+]+)")
_CREATED = re.compile(r"([A-D]) created new capsule (Q(\d+)-[A-D+]+)")
_ALREADY = re.compile(r"([A-D]) already endorsed (Q(\d+)-[A-D+]+)")
_PASSWORD = re.compile(r"([A-D]) entered (CORRECT|WRONG) password using capsules: (.*)")
_STATUS_KEY = re.compile(r"^Q(\d+):")


def _creator(label: str) -> str:
    return label.partition("-")[2].split("+")[0]


def _status_capsules(status: dict[str, Any]) -> dict[int, list[Capsule]]:
    out: dict[int, list[Capsule]] = {}
    for key, caps in (status or {}).items():
        m = _STATUS_KEY.match(str(key))
        if not m:
            continue
        items = []
        for item in caps or []:
            label = str(item[0]) if isinstance(item, list | tuple) and item else str(item)
            endorsers = label.partition("-")[2].split("+")
            items.append(Capsule(label, endorsers[0], endorsers))
        out[int(m.group(1))] = items
    return out


def _reference_choice(seat: str, text: str, defaulted: bool) -> Choice:
    requested, target, names = parse_action(text)
    action = "pass" if defaulted or requested == "invalid" else requested
    if action == "verify" and (target is None or not 1 <= target <= len(SEATS)):
        action = "pass"
    return Choice(
        seat=seat,
        action=action,
        target=target if action == "verify" else None,
        names=names if action == "volunteer" else None,
        requested=requested,
        valid=not defaulted and requested != "invalid",
    )


def reference_game(logged: LoggedGame, d_correct: bool, max_rounds: int) -> GameTrace:
    """One ``game_*.json`` of the reference study as a :class:`GameTrace`."""
    owners = {k: s for k, s in enumerate(SEATS, start=1)}
    game = GameTrace(session=0, game=logged.index, d_correct=d_correct, owners=owners, max_rounds=max_rounds)
    capsules = {k: [Capsule(f"Q{k}-{s}", s, [s])] for k, s in owners.items()}
    coins = dict.fromkeys(SEATS, 4)
    for rnd in logged.rounds:
        defaulted = rnd.defaulted
        trace = RoundTrace(
            number=rnd.number,
            alive=rnd.alive,
            coins=dict(coins),
            capsules=_copy(capsules),
            choices=[_reference_choice(s, t, defaulted.get(s, False)) for s, t in rnd.decisions.items()],
        )
        for line in rnd.outcome.splitlines():
            if m := _AGREE.search(line):
                trace.verifications.append(
                    Verification(m.group(1), int(m.group(3)), _creator(m.group(2)), False)
                )
            elif m := _CREATED.search(line):
                trace.verifications.append(Verification(m.group(1), int(m.group(3)), m.group(1), True))
            elif m := _ALREADY.search(line):
                trace.verifications.append(
                    Verification(m.group(1), int(m.group(3)), _creator(m.group(2)), False)
                )
            elif m := _PASSWORD.search(line):
                used = {}
                for label in capsule_names(m.group(3)):
                    used[_puzzle_index(label)] = _creator(label)
                trace.password, trace.correct = used, m.group(2) == "CORRECT"
        game.rounds.append(trace)
        coins.update(rnd.coins)
        after = _status_capsules(rnd.capsule_status)
        if after:
            capsules = after
    return game


def reference_trace(folder: Path) -> RunTrace:
    """A reference run folder as a :class:`RunTrace` (cell keys as ``python -m analysis trust`` reads them;
    a damaged game file ends the run there, with a warning)."""
    from analysis.escape_room.reference import import_reference_run

    logged = read_reference_run(folder)  # raises ReferenceLogError
    imported = import_reference_run(logged)  # cell keys, D's schedule; warns about a damaged game file
    run = imported.run
    max_rounds = int((logged.settings.get("game_settings") or {}).get("max_rounds_per_game") or len(SEATS))
    d_correct = {g["game"]: bool(g["d_correct"]) for g in imported.games}
    trace = RunTrace(
        source="reference",
        run_id=str(run["run_id"]),
        path=str(folder),
        model=str(run["model"]),
        agent=str(run["agent"]),
        schedule=str(run["schedule"]),
        memory=str(run["memory"]),
    )
    for logged_game in logged.games:
        trace.games.append(reference_game(logged_game, d_correct[logged_game.index], max_rounds))
    return trace


def iter_reference_traces(root: Path) -> Iterator[RunTrace]:
    """Every reference run folder under ``root``."""
    for folder in find_reference_runs(root):
        yield reference_trace(folder)
