"""Escape-room games for the viewer: engine events and reference-study logs → one round-by-round shape.

A game is a dict ``{"game", "session", "d_correct", "partner_puzzle", "puzzles", "rounds", "end"}``. Each round
holds what the seats saw when they decided (alive seats, coins, capsules with endorsers) and what happened
(decisions with confidence, reasoning and raw text, verifications, the volunteer and password, deaths, the
announcement). ``end`` holds the outcome, scores and which capsules were right. An engine game also holds its
model calls outside the decisions: ``own_answers`` (``game.own_answer=llm``, before round 1) and
``reflections`` (reflection memory, after the game); with ``game.verifier=llm`` a verification holds the
model's answer. Each model call keeps its raw text and request-store key (``request``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from analysis.view.requests import Requests
from trustsim.rundir import Run
from trustsim.rundir.reference_logs import LoggedGame, LoggedRun

PARTNER = "D"
SEATS = ("A", "B", "C", "D")
CALL_FIELDS = ("answer", "raw", "request")
"""What the page keeps of a model call that is not a decision (a verification's solve, an own answer, a
reflection)."""


def _call(event: dict[str, Any]) -> dict[str, Any]:
    """A model call's fields present in its event (a scripted verification has none)."""
    return {k: event[k] for k in CALL_FIELDS if k in event}


def _copy_capsules(capsules: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    return {
        q: [{"label": c["label"], "endorsers": list(c["endorsers"])} for c in caps]
        for q, caps in capsules.items()
    }


def summarise(game: dict[str, Any]) -> dict[str, Any]:
    """One line per game for the session strip: volume, partner share, invalid answers, outcome."""
    verifications = partner = invalid = 0
    for rnd in game["rounds"]:
        for d in rnd["decisions"]:
            if d["seat"] == PARTNER:
                continue
            if not d.get("valid", True):
                invalid += 1
        for v in rnd["verifications"]:
            if v["seat"] == PARTNER:
                continue
            verifications += 1
            partner += int(v["puzzle"] == game["partner_puzzle"])
    return {
        "game": game["game"],
        "session": game["session"],
        "d_correct": game["d_correct"],
        "outcome": game["end"].get("outcome"),
        "rounds": len(game["rounds"]),
        "verifications": verifications,
        "partner_verifications": partner,
        "invalid": invalid,
    }


class _EngineGame:
    """Accumulates one engine game from its events."""

    def __init__(self, start: dict[str, Any], verifier_exact: bool) -> None:
        self.verifier_exact = verifier_exact
        self.answers = {int(q[1:]): p["answer"] for q, p in start["puzzles"].items()}
        self.values: dict[str, Any] = {}
        self.capsules: dict[str, list[dict[str, Any]]] = {q: [] for q in start["puzzles"]}
        for label, value in start.get("sealed", {}).items():
            slot, _, owner = label.partition("-")
            self.capsules.setdefault(slot, []).append({"label": label, "endorsers": [owner]})
            self.values[label] = value
        self.game: dict[str, Any] = {
            "game": start["game"],
            "session": start.get("session", 0),
            "d_correct": bool(start.get("d_correct", True)),
            "partner_puzzle": int(start.get("partner_puzzle", 4)),
            "puzzles": [
                {"slot": q, "text": p.get("text"), "answer": p.get("answer"), "owner": p.get("owner")}
                for q, p in start["puzzles"].items()
            ],
            "rounds": [],
            "end": {},
            "own_answers": [],
            "reflections": [],
        }
        self.truth: dict[str, bool] | None = None

    @property
    def round(self) -> dict[str, Any]:
        return self.game["rounds"][-1]

    def add(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "own_answer":
            self.game["own_answers"].append(
                {"seat": event["seat"], "puzzle": int(event["puzzle"])} | _call(event)
            )
        elif kind == "reflection":
            self.game["reflections"].append({"seat": event["seat"]} | _call(event))
        elif kind == "round_start":
            self.game["rounds"].append(
                {
                    "round": event["round"],
                    "alive": event.get("alive", []),
                    "coins": event.get("coins", {}),
                    "capsules": _copy_capsules(self.capsules),
                    "decisions": [],
                    "verifications": [],
                    "volunteer": None,
                    "deaths": [],
                }
            )
        elif not self.game["rounds"]:
            return
        elif kind == "decision":
            self.round["decisions"].append(
                {
                    k: event.get(k)
                    for k in (
                        "seat",
                        "action",
                        "valid",
                        "invalid_reason",
                        "resolved",
                        "confidence",
                        "reasoning",
                        "raw",
                        "request",
                    )
                    if event.get(k) is not None
                }
            )
        elif kind == "verification":
            self._verify(event)
        elif kind == "volunteer":
            self.round["volunteer"] = {
                k: event.get(k) for k in ("volunteers", "chosen", "password", "correct")
            }
        elif kind == "death":
            self.round["deaths"].append({"seat": event["seat"], "cause": event.get("cause")})
        elif kind == "reveal":
            self.truth = dict(event.get("capsules") or {})

    def _verify(self, event: dict[str, Any]) -> None:
        slot = f"Q{event['puzzle']}"
        seat, label = event["seat"], event["capsule"]
        caps = self.capsules.setdefault(slot, [])
        if event.get("created"):
            caps.append({"label": label, "endorsers": [seat]})
            if self.verifier_exact:
                self.values[label] = self.answers.get(int(event["puzzle"]))
            elif "answer" in event:  # verifier=llm: the model's answer fills the new capsule
                self.values[label] = event["answer"]
        elif not event.get("already_endorsed"):
            for cap in caps:
                if cap["label"] == label and seat not in cap["endorsers"]:
                    cap["endorsers"].append(seat)
        self.round["verifications"].append(
            {
                "seat": seat,
                "puzzle": int(event["puzzle"]),
                "capsule": label,
                "created": bool(event.get("created")),
                "already": bool(event.get("already_endorsed")),
            }
            | _call(event)
        )

    def finish(self, end: dict[str, Any]) -> dict[str, Any]:
        final = _copy_capsules(self.capsules)
        for slot, caps in final.items():
            answer = self.answers.get(int(slot[1:]))
            for cap in caps:
                if self.truth is not None and cap["label"] in self.truth:
                    cap["right"] = bool(self.truth[cap["label"]])
                elif cap["label"] in self.values:
                    cap["right"] = self.values[cap["label"]] == answer
                else:
                    cap["right"] = None  # a verifier's own answer that the log does not hold
        self.game["end"] = {
            "outcome": end.get("outcome"),
            "survivors": end.get("survivors", []),
            "coins": end.get("coins", {}),
            "scores": end.get("scores", {}),
            "escape_round": end.get("escape_round"),
            "capsules": final,
        }
        return self.game


def engine_games(
    events: Iterable[dict[str, Any]], *, verifier_exact: bool = True
) -> Iterator[dict[str, Any]]:
    """Yield each finished escape-room game of a run's event stream, in log order."""
    open_games: dict[tuple[int, int], _EngineGame] = {}
    for event in events:
        kind = event.get("type")
        if "game" not in event or "session" not in event:
            continue
        key = (event["session"], event["game"])
        if kind == "game_start":
            open_games[key] = _EngineGame(event, verifier_exact)
        elif kind == "game_end":
            game = open_games.pop(key, None)
            if game is not None:
                yield game.finish(event)
        elif key in open_games:
            open_games[key].add(event)


# -- the reference study's logs ----------------------------------------------------------------------------
_DECISION = re.compile(r"^\s*DECISION:\s*(.+)$", re.MULTILINE)
_REASONING = re.compile(r"REASONING:\s*(.*)", re.DOTALL)
_CAPSULE_KEY = re.compile(r"^(Q\d+):(.*)$")


def _reference_capsules(status: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, bool]]:
    capsules: dict[str, list[dict[str, Any]]] = {}
    right: dict[str, bool] = {}
    for key, caps in (status or {}).items():
        m = _CAPSULE_KEY.match(str(key))
        if not m:
            continue
        slot, answer = m.group(1), m.group(2)
        out = []
        for item in caps or []:
            label = str(item[0]) if isinstance(item, list | tuple) and item else str(item)
            value = str(item[1]) if isinstance(item, list | tuple) and len(item) > 1 else ""
            base, *more = label.split("+")
            owner = base.partition("-")[2]
            out.append({"label": label, "endorsers": [owner, *more]})
            right[label] = value.strip() == answer.strip()
        capsules[slot] = out
    return capsules, right


def _initial_capsules(first_status: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Before round 1 every puzzle has one capsule: its owner's (the first name of the first label)."""
    capsules, _ = _reference_capsules(first_status)
    initial = {}
    for slot, caps in capsules.items():
        if caps:
            base = caps[0]["label"].split("+")[0]
            initial[slot] = [{"label": base, "endorsers": [base.partition("-")[2]]}]
    return initial


def reference_game(logged: LoggedGame, d_correct: bool) -> dict[str, Any]:
    """One ``game_*.json`` of the reference study as a viewer game."""
    rounds_json = logged.rounds
    config = logged.agents_config
    puzzles = [
        {"slot": f"Q{i}", "text": (config.get(seat) or {}).get("puzzle"), "answer": None, "owner": seat}
        for i, seat in enumerate(SEATS, start=1)
    ]
    statuses = [r.capsule_status for r in rounds_json]
    before = _initial_capsules(statuses[0]) if statuses else {}
    coins = dict.fromkeys(SEATS, 4)
    rounds = []
    for i, rnd in enumerate(rounds_json):
        alive = rnd.alive
        decisions: list[dict[str, Any]] = []
        for seat, action in rnd.decisions.items():
            text = rnd.reasoning.get(seat, "")
            m = _REASONING.search(text)
            defaulted = rnd.defaulted.get(seat, False)
            found = _DECISION.search(text)
            valid = not defaulted and (found is not None or not text)
            decisions.append(
                {
                    "seat": seat,
                    "action": str(action),
                    "valid": valid,
                    "invalid_reason": None
                    if valid
                    else "defaulted_to_pass"
                    if defaulted
                    else "no DECISION line",
                    "resolved": "Pass" if defaulted else str(action),
                    "reasoning": m.group(1).strip() if m else None,
                    "raw": text or None,
                }
            )
        verifications = []
        for d in decisions:
            if d["resolved"].lower().startswith("verify"):
                target = re.search(r"Q(\d+)", d["resolved"])
                if target:
                    puzzle = int(target.group(1))
                    verifications.append(
                        {"seat": d["seat"], "puzzle": puzzle, "capsule": f"Q{puzzle}", "created": None}
                    )
        volunteer = rnd.raw.get("volunteer")
        outcome_text = rnd.outcome
        rounds.append(
            {
                "round": rnd.number,
                "alive": alive,
                "coins": dict(coins),
                "capsules": before,
                "decisions": decisions,
                "verifications": verifications,
                "volunteer": None
                if not volunteer
                else {
                    "volunteers": [volunteer],
                    "chosen": volunteer,
                    "password": None,
                    "correct": "CORRECT" in outcome_text,
                },
                "deaths": [{"seat": s, "cause": c} for s, c in rnd.death_reasons.items()],
                "announcement": outcome_text,
            }
        )
        coins.update(rnd.coins)
        before, _ = _reference_capsules(statuses[i])
    final, right = _reference_capsules(statuses[-1]) if statuses else ({}, {})
    for caps in final.values():
        for cap in caps:
            cap["right"] = right.get(cap["label"])
    for p in puzzles:
        for key in statuses[-1] if statuses else {}:
            m = _CAPSULE_KEY.match(str(key))
            if m and m.group(1) == p["slot"]:
                p["answer"] = m.group(2)
    escaped, survivors = logged.escaped, logged.survivors
    return {
        "game": logged.index,
        "session": 0,
        "d_correct": d_correct,
        "partner_puzzle": 4,
        "puzzles": puzzles,
        "rounds": rounds,
        "end": {
            "outcome": "escaped" if escaped else "all_dead" if not survivors else "failed",
            "survivors": survivors,
            "coins": coins,
            "scores": {s: (coins.get(s, 0) if s in survivors else 0) for s in SEATS},
            "escape_round": len(rounds) if escaped else None,
            "capsules": final,
        },
    }


def reference_games(logged: LoggedRun, d_list: list[bool]) -> Iterator[dict[str, Any]]:
    """Every readable game of one reference run folder, in file order (a damaged file ends the run there)."""
    for game in logged.games:
        d_correct = bool(d_list[game.index - 1]) if game.index - 1 < len(d_list) else True
        yield reference_game(game, d_correct)


SEARCH_CHARS = 4000  # reasoning kept per decision in the search file


def search_entries(game: dict[str, Any]) -> Iterator[list[Any]]:
    """Search entries of one game: ``[session, game, round, seat, reasoning]`` per decision with text."""
    for rnd in game["rounds"]:
        for d in rnd["decisions"]:
            text = d.get("reasoning") or d.get("raw")
            if text:
                yield [game["session"], game["game"], rnd["round"], d["seat"], str(text)[:SEARCH_CHARS]]


def model_calls(game: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every model call of a game the page shows: own answers, each round's decisions and verifications, the
    reflections (each a dict that may hold ``request``)."""
    yield from game.get("own_answers", ())
    for rnd in game["rounds"]:
        yield from rnd["decisions"]
        yield from rnd["verifications"]
    yield from game.get("reflections", ())


def write_games(
    w: Any,
    key: str,
    games: Iterable[dict[str, Any]],
    row: dict[str, Any],
    requests: Requests | None = None,
) -> dict[str, Any]:
    """Write each game's page file, its decisions' requests (``requests``: the run's store) and the run's
    search file (``w``: the site writer); returns the run page's data and sets the index row's counts."""
    summaries: list[dict[str, Any]] = []
    search: list[list[Any]] = []
    decisions = invalid = 0
    for game in games:
        unit = f"{game['session']}-{game['game']}"
        w.put(f"r/{key}/g/{unit}.js", f"game/{key}/{game['session']}/{game['game']}", game)
        if requests is not None:
            keys = [d.get("request") for d in model_calls(game)]
            requests.write(w, f"r/{key}/q/{unit}.js", f"req/{key}/{unit}", keys)
        summary = summarise(game)
        summaries.append(summary)
        search.extend(search_entries(game))
        for rnd in game["rounds"]:
            for d in rnd["decisions"]:
                if d["seat"] != "D":
                    decisions += 1
                    invalid += not d.get("valid", True)
    w.stats.games += len(summaries)
    w.put(f"r/{key}/search.js", f"search/{key}", search)
    row["invalid_share"] = round(invalid / decisions, 4) if decisions else None
    row["games"] = row.get("games") or len(summaries)
    row["decisions"] = row.get("decisions") or decisions
    page: dict[str, Any] = {"games": summaries, "searchable": len(search)}
    if requests is not None:
        page["requests"] = requests.page_info()
    return page


def escape_room_page(
    w: Any, run: Run, events: Iterator[dict[str, Any]], row: dict[str, Any]
) -> dict[str, Any]:
    """The viewer page of an escape-room run: its games replayed from the events."""
    verifier = ((run.manifest.get("config") or {}).get("game") or {}).get("verifier", "exact")
    games = engine_games(events, verifier_exact=verifier == "exact")
    return write_games(w, row["key"], games, row, w.stores.for_run(run))
