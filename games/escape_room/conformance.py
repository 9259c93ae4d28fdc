"""Conformance replay: play the reference study's recorded games through OUR rules and compare.

For every recorded game of an Escape-room-v2 log folder the start state is rebuilt from the log (puzzles
and correct answers from the capsule snapshot keys, sealed answers from the per-round statuses — D's
``wrong answer`` included —, seats A–D owning Q1–Q4, 4 coins each). Each round's recorded decisions are
fed through :mod:`games.escape_room.rules`; the recorded inputs the rules cannot produce are taken as
given: the verifiers' answers (model sub-calls, read from the announcement and the capsule snapshot), the
volunteer chosen among several and the seat eliminated when nobody volunteered. What the rules produce is
compared with what the log says happened, round by round.

Pure code over files and the rules (no Mesa, no model calls). ``python -m analysis conformance`` is the
command line (``analysis/conformance/``); ``docs/escape_room.md`` explains the fields and the findings.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games.escape_room.rules import RuleOptions, illegal_reason, new_game, resolve_round, resolved_action
from games.escape_room.types import Action, Puzzle
from trustsim.rundir.reference_logs import LoggedGame, LoggedRound, ReferenceLogError, read_reference_run

SEATS = ("A", "B", "C", "D")
OWNERS = {k: s for k, s in enumerate(SEATS, start=1)}
COINS = 4

# Fields compared (the part after "round:" in ``first_difference``).
FIELDS = (
    "puzzle_answer",  # start: our arithmetic of the puzzle text = the recorded correct answer
    "agents_config.answer",  # start: the logged answer = the sealed answer (known logging bug)
    "alive",  # start of round: the seats alive
    "legal",  # our rules accept every recorded decision
    "whom_to_verify",  # decisions CSV: target of a verification (known logging bug)
    "announcement",  # each verification's announced effect: endorsed / created / already, labels, coins
    "verifications",  # round log field (known logging bug)
    "capsules",  # end of round: every capsule's label (= its endorsers, in order) per puzzle
    "coins",  # end of round: every seat's coins (dead seats 0, the reference convention)
    "volunteer",  # the volunteer who submitted, and whether the password was correct
    "password",  # the capsules the password selected
    "capsule_selections",  # round log field (known logging bug)
    "deaths",  # seat -> cause
    "rounds",  # number of rounds
    "outcome",  # SUCCESS / ALL_DEAD / MAX_ROUNDS
    "survivors",
    "scores",  # final score per seat (simulation_scores.csv: coins if escaped and survived, else 0)
)

RULES = {
    "alive": "elimination and death rules (who is still playing)",
    "legal": "legality of actions (illegal_reason: own_verify, capsule_names, no_coins, password form)",
    "announcement": "verification resolution (endorse a matching capsule, open a new one, or already endorsed)",
    "capsules": "capsule creation and endorsement order",
    "coins": "verification cost (1 coin, own puzzle included) and coin bookkeeping",
    "volunteer": "volunteer selection and the password check (capsule_names, numeric per slot)",
    "password": "capsule name resolution (capsule_names)",
    "deaths": "death rules (wrong password kills the volunteer; no volunteer eliminates a random seat)",
    "rounds": "game end (escape, all dead, max_rounds)",
    "outcome": "game end (escape, all dead, max_rounds)",
    "survivors": "death rules and game end",
    "scores": "score = coins if escaped and alive, else 0",
}
"""The rule each compared field exercises (named in ``reason`` for a rule difference)."""

LOGGING_BUGS = {
    "agents_config.answer": "reference logging bug: agents_config.answer is logged before answers exist "
    "(null in game 1, the previous game's answer later)",
    "whom_to_verify": "reference logging bug: whom_to_verify is always N/A",
    "verifications": "reference logging bug: the round field 'verifications' is never filled",
    "capsule_selections": "reference logging bug: the round field 'capsule_selections' is never filled",
}

_VERIFY_LINE = re.compile(
    r"^\s*(?:✅\s*(?P<a>[A-Z]) agrees with (?P<al>\S+) → now (?P<an>\S+) \(-1 coin: (?P<ab>\d+)→(?P<aa>\d+)\)"
    r"|🆕\s*(?P<c>[A-Z]) created new capsule (?P<cl>\S+) \(conflicting answer\) \(-1 coin: (?P<cb>\d+)→(?P<ca>\d+)\)"
    r"|ℹ️\s*(?P<e>[A-Z]) already endorsed (?P<el>\S+))"
)
_PASSWORD_LINE = re.compile(
    r"(?P<seat>[A-Z]) entered (?P<ok>CORRECT|WRONG) password using capsules: (?P<caps>.*)"
)
_CAPSULE_NAME = re.compile(r"(Q\d+)-([A-Z](?:[+,][A-Z])*)")
_ARITH = re.compile(r"What is (\d+) ([-+×÷*/x]) (\d+)\?")


@dataclass(frozen=True, slots=True)
class Difference:
    """One compared field that disagrees. ``kind``: ``logging_bug`` (documented reference bug), ``rule``
    (our rules produce something else) or ``unexplained``."""

    round: int
    field: str
    ours: str
    reference: str
    kind: str
    reason: str

    @property
    def where(self) -> str:
        return f"{self.round}:{self.field}"


@dataclass(slots=True)
class GameResult:
    """The comparison of one recorded game."""

    run: str
    game: int
    game_id: str
    rounds: int
    compared: dict[str, int] = field(default_factory=dict)  # field -> comparisons made
    exercised: dict[str, int] = field(default_factory=dict)  # rule path -> times the recorded game used it
    differences: list[Difference] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """True when every compared field agrees in every round."""
        return not self.differences

    @property
    def agree_except_logging_bugs(self) -> bool:
        return all(d.kind == "logging_bug" for d in self.differences)

    @property
    def first_difference(self) -> str:
        return self.differences[0].where if self.differences else ""

    @property
    def first_rule_difference(self) -> str:
        return next((d.where for d in self.differences if d.kind != "logging_bug"), "")

    @property
    def fields_differing(self) -> list[str]:
        return sorted({d.field for d in self.differences}, key=FIELDS.index)

    @property
    def reason(self) -> str:
        """Each differing field once, with its classification."""
        seen: dict[str, str] = {}
        for d in self.differences:
            seen.setdefault(d.field, d.reason)
        return "; ".join(f"{f}: {seen[f]}" for f in self.fields_differing)


class _Values:
    """Recorded answer strings as the integers our capsules hold: numbers as themselves, anything else
    (D's literal ``wrong answer``) as a distinct negative sentinel."""

    def __init__(self) -> None:
        self._other: dict[str, int] = {}

    def __call__(self, text: Any) -> int:
        s = str(text).strip()
        try:
            number = float(s)
        except ValueError:
            number = None
        if number is not None and number == int(number):
            return int(number)
        return self._other.setdefault(s, -1 - len(self._other))


def _ref_label(endorsers: Sequence[str], puzzle: int) -> str:
    """Our capsule in the reference's naming: the label lists the endorsers (``Q4-D+C``)."""
    return f"Q{puzzle}-{'+'.join(endorsers)}"


def _arith(text: str) -> int | None:
    m = _ARITH.search(text or "")
    if not m:
        return None
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op in "×*x":
        return a * b
    return a // b if b and a % b == 0 else None


def parse_decision(text: str) -> Action:
    """A recorded decision string as our action, read as the reference moderator read it."""
    low = text.lower()
    if "verify:" in low:
        m = re.search(r"Q(\d+)", text, re.IGNORECASE)
        return Action.verify(int(m.group(1))) if m else Action("verify", target=0)
    if "volunteer:" in low or low.strip().startswith("volunteer"):
        password = {int(q[1:]): f"{q}-{names}" for q, names in _CAPSULE_NAME.findall(text)}
        return Action("volunteer", password=password)
    return Action.pass_()


@dataclass(slots=True)
class _Recorded:
    """One recorded round, parsed."""

    number: int
    alive: list[str]
    decisions: dict[str, str]
    lines: dict[str, re.Match[str]]  # verifier -> announcement line
    password: re.Match[str] | None
    death_reasons: dict[str, str]
    statuses: dict[str, dict[str, Any]]
    snapshot: dict[int, list[tuple[str, str]]]  # puzzle -> [(label, answer text)]
    raw: dict[str, Any]


def _parse_round(rnd: LoggedRound) -> _Recorded:
    lines: dict[str, re.Match[str]] = {}
    password = None
    for line in rnd.outcome.splitlines():
        if m := _VERIFY_LINE.match(line):
            lines[m.group("a") or m.group("c") or m.group("e")] = m
        elif m := _PASSWORD_LINE.search(line):
            password = m
    snapshot: dict[int, list[tuple[str, str]]] = {}
    for key, caps in rnd.capsule_status.items():
        snapshot[int(str(key).split(":")[0][1:])] = [(str(c[0]), str(c[1])) for c in caps]
    return _Recorded(
        number=int(rnd.raw.get("round", 0)),
        alive=rnd.alive_logged,
        decisions=rnd.decisions,
        lines=lines,
        password=password,
        death_reasons=rnd.death_reasons,
        statuses=rnd.statuses,
        snapshot=snapshot,
        raw=rnd.raw,
    )


class _Comparer:
    def __init__(self, result: GameResult) -> None:
        self.result = result

    def check(
        self, rnd: int, name: str, ours: Any, ref: Any, *, kind: str = "rule", reason: str = ""
    ) -> None:
        self.result.compared[name] = self.result.compared.get(name, 0) + 1
        if ours != ref:
            if name in LOGGING_BUGS and kind == "rule":
                kind, reason = "logging_bug", LOGGING_BUGS[name]
            self.result.differences.append(
                Difference(
                    rnd,
                    name,
                    _show(ours),
                    _show(ref),
                    kind,
                    reason or f"rule difference: {RULES.get(name, name)}",
                )
            )


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def replay_game(
    run: str,
    index: int,
    game: dict[str, Any],
    *,
    previous_sealed: dict[str, str] | None,
    whom_to_verify: dict[tuple[int, str], str] | None = None,
    scores: dict[str, tuple[bool, int]] | None = None,
    rules: RuleOptions | None = None,
) -> tuple[GameResult, dict[str, str]]:
    """Replay one recorded game; returns its result and the sealed answer texts (for the next game's check
    of ``agents_config.answer``)."""
    rounds = [_parse_round(r) for r in LoggedGame(Path(), index, game).rounds]
    result = GameResult(run=run, game=index, game_id=str(game.get("game_id", "")), rounds=len(rounds))
    cmp = _Comparer(result)
    values = _Values()
    if not rounds:
        cmp.check(0, "rounds", 0, "no rounds recorded", kind="unexplained", reason="the log holds no round")
        return result, {}

    # -- start state ------------------------------------------------------------------------------------
    first = rounds[0]
    correct: dict[int, str] = {}
    for key in first.raw.get("capsule_status") or {}:
        q, _, answer = str(key).partition(":")
        correct[int(q[1:])] = answer
    config = game.get("agents_config") or {}
    sealed_text = {s: str((first.statuses.get(s) or {}).get("answer")) for s in SEATS}
    puzzles = []
    for k, seat in OWNERS.items():
        text = str((config.get(seat) or {}).get("puzzle", ""))
        puzzles.append(Puzzle(k, text, values(correct.get(k, "?"))))
        cmp.check(0, "puzzle_answer", _arith(text), values(correct.get(k, "?")),
                  kind="unexplained", reason="the puzzle text's arithmetic differs from the recorded answer")  # fmt: skip
        logged = (config.get(seat) or {}).get("answer")
        expected = None if previous_sealed is None else previous_sealed.get(seat)
        if logged != sealed_text[seat]:
            if logged is None or logged == expected:  # null: a fresh agent (game 1, or memoryless runs)
                cmp.check(0, "agents_config.answer", sealed_text[seat], logged)
            else:
                cmp.check(0, "agents_config.answer", sealed_text[seat], logged, kind="unexplained",
                          reason="agents_config.answer is neither the sealed answer nor the previous game's")  # fmt: skip
        else:
            cmp.check(0, "agents_config.answer", sealed_text[seat], logged)
    state = new_game(
        puzzles,
        OWNERS,
        {k: values(sealed_text[s]) for k, s in OWNERS.items()},
        COINS,
        len(SEATS),
        rules=rules,
    )

    # -- rounds ------------------------------------------------------------------------------------------
    for rec in rounds:
        r = rec.number
        if state.over:
            cmp.check(r, "rounds", state.round, len(rounds))
            break
        cmp.check(r, "alive", list(state.alive), rec.alive)
        resolved: dict[str, Action] = {}
        answers: dict[str, int] = {}
        for seat in state.alive:
            action = parse_decision(rec.decisions.get(seat, "Pass"))
            why = illegal_reason(state, seat, action)
            cmp.check(
                r,
                "legal",
                why,
                None,
                reason=f"rule difference: our rules find {rec.decisions.get(seat)!r} by {seat} illegal ({why})",
            )
            resolved[seat] = resolved_action(state, action, why)
            if action.kind == "verify" and not why:
                answers[seat] = _verifier_answer(rec, seat, action.target_puzzle, values)
                if whom_to_verify is not None:
                    cmp.check(r, "whom_to_verify", f"Q{action.target}", whom_to_verify.get((r, seat), "N/A"))
        draws = _Draws(rec, cmp, r)
        coins_before = dict(state.coins)
        for seat, action in resolved.items():
            if action.kind == "verify" and state.owners.get(action.target_puzzle) == seat:
                _count(result, "own-puzzle verification (charged, no capsule change)")
            if action.kind == "volunteer":
                for k, name in (action.password or {}).items():
                    if state.find_capsule(k, name) is None:
                        named = set(re.split(r"[+,]", name.split("-", 1)[-1]))
                        exact_creator = any(c.endorsers[0] in named for c in state.capsules.get(k, ()))
                        _count(
                            result,
                            "capsule name not an exact label, resolved by its creator (lenient)"
                            if exact_creator
                            else "capsule name resolved by an endorser only (lenient fallback)",
                        )
        report = resolve_round(state, resolved, answers, _NO_RNG, game=index, draw=draws)
        # announcements of verifications
        ours_lines = {v.seat: _announce(v, coins_before[v.seat]) for v in report.verifications}
        ref_lines = {s: _ref_announce(m) for s, m in rec.lines.items()}
        for seat in sorted(set(ours_lines) | set(ref_lines)):
            cmp.check(r, "announcement", ours_lines.get(seat), ref_lines.get(seat))
        logged = rec.raw.get("verifications") or []
        if report.verifications or logged:
            cmp.check(r, "verifications", len(report.verifications), len(logged))
        ours_caps = {k: [_ref_label(c.endorsers, k) for c in caps] for k, caps in state.capsules.items()}
        ref_caps = {k: [label for label, _ in caps] for k, caps in rec.snapshot.items()}
        cmp.check(r, "capsules", ours_caps, ref_caps)
        ours_coins = {s: (state.coins[s] if s in state.alive else 0) for s in SEATS}
        ref_coins = {s: int((rec.statuses.get(s) or {}).get("coins", -1)) for s in SEATS}
        cmp.check(r, "coins", ours_coins, ref_coins)
        ours_vol = [report.chosen_volunteer, report.password_correct] if report.chosen_volunteer else None
        ref_vol = (
            [rec.password.group("seat"), rec.password.group("ok") == "CORRECT"] if rec.password else None
        )
        cmp.check(r, "volunteer", ours_vol, ref_vol)
        if report.password and rec.password:
            found = {k: state.find_capsule(k, lab) for k, lab in sorted(report.password.items())}
            ours_pw = [_ref_label(c.endorsers if c is not None else (), k) for k, c in found.items()]
            cmp.check(r, "password", ours_pw, [c.strip() for c in rec.password.group("caps").split(",")])
        selections = rec.raw.get("capsule_selections") or {}
        if report.chosen_volunteer or selections:
            cmp.check(r, "capsule_selections", bool(report.chosen_volunteer), bool(selections))
        cmp.check(r, "deaths", dict(report.deaths), rec.death_reasons)
    if not state.over or state.round < len(rounds):
        cmp.check(state.round, "rounds", state.round, len(rounds))

    # -- end of game --------------------------------------------------------------------------------------
    end = state.round
    outcome = {"escaped": "SUCCESS", "all_dead": "ALL_DEAD"}.get(state.outcome, "MAX_ROUNDS")
    cmp.check(end, "outcome", outcome, str(game.get("game_outcome")))
    cmp.check(end, "survivors", sorted(state.alive), sorted(game.get("survivors") or []))
    if scores is not None:
        escaped = str(game.get("game_outcome")) == "SUCCESS"
        ref_scores = {s: (c if escaped and alive else 0) for s, (alive, c) in scores.items()}
        cmp.check(end, "scores", {s: state.score(s) for s in ref_scores}, ref_scores)
    return result, sealed_text


def _count(result: GameResult, path: str) -> None:
    result.exercised[path] = result.exercised.get(path, 0) + 1


class _NoRng:
    def randrange(self, n: int) -> int:  # pragma: no cover - every draw is recorded
        raise AssertionError("the replay draws nothing at random")


_NO_RNG: Any = _NoRng()


class _Draws:
    """Recorded draws: the volunteer who submitted, the seat eliminated when nobody volunteered."""

    def __init__(self, rec: _Recorded, cmp: _Comparer, rnd: int) -> None:
        self.rec, self.cmp, self.rnd = rec, cmp, rnd

    def __call__(self, kind: str, options: Sequence[str]) -> str:
        if kind == "volunteer":
            recorded = self.rec.password.group("seat") if self.rec.password else None
        else:
            recorded = next((s for s, why in self.rec.death_reasons.items() if why == "no_volunteer"), None)
        if recorded is not None and recorded in options:
            return recorded
        # Our rules ask for a draw the log did not make (or made among other seats): the games diverge here;
        # the volunteer/deaths comparisons record it. Continue deterministically.
        return options[0]


def _verifier_answer(rec: _Recorded, seat: str, puzzle: int, values: _Values) -> int:
    """The verifier's private answer, as the log reveals it: the value of the capsule it endorsed/created."""
    m = rec.lines.get(seat)
    if m is None:
        return values(f"<no announcement for {seat}>")
    label = m.group("an") or m.group("cl") or m.group("el")
    for lab, answer in rec.snapshot.get(puzzle, []):
        if lab == label or lab.startswith(label + "+"):
            return values(answer)
    return values(f"<capsule {label} not in the snapshot>")


def _announce(v: Any, coins_before: int) -> list:
    """Our verification in the reference announcement's terms: [kind, label before, label after, coins]."""
    after = _ref_label(v.endorsers, v.puzzle)
    if v.created:
        return ["created", after, after, [coins_before, coins_before - 1]]
    if v.already:  # the reference announces no coins here; the coins comparison covers the charge
        return ["already", after, after, None]
    return ["agrees", _ref_label(v.endorsers[:-1], v.puzzle), after, [coins_before, coins_before - 1]]


def _ref_announce(m: re.Match[str]) -> list:
    if m.group("a"):
        return ["agrees", m.group("al"), m.group("an"), [int(m.group("ab")), int(m.group("aa"))]]
    if m.group("c"):
        return ["created", m.group("cl"), m.group("cl"), [int(m.group("cb")), int(m.group("ca"))]]
    return ["already", m.group("el"), m.group("el"), None]


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def replay_run(folder: str | Path, rules: RuleOptions | None = None) -> list[GameResult]:
    """Replay every game of one reference run folder (games in play order, by file name)."""
    folder = Path(folder)
    whom: dict[str, dict[tuple[int, str], str]] = {}
    for row in _read_csv(folder / "game_data_agent_decisions.csv"):
        whom.setdefault(row["game_id"], {})[(int(row["round"]), row["agent_id"])] = row.get(
            "whom_to_verify", ""
        )
    scores: dict[str, dict[str, tuple[bool, int]]] = {}
    for row in _read_csv(folder / "simulation_scores.csv"):
        alive = str(row.get("survival", "")).strip().lower() == "true"
        scores.setdefault(row["game_id"], {})[row["player"]] = (alive, int(float(row.get("coins") or 0)))
    results: list[GameResult] = []
    previous: dict[str, str] | None = None
    logged = read_reference_run(folder)
    if logged.damaged:
        raise ReferenceLogError(logged.damaged)
    for game in logged.games:
        game_id = game.game_id
        result, previous = replay_game(
            folder.name,
            game.index,
            game.data,
            previous_sealed=previous,
            whom_to_verify=whom.get(game_id) if whom else None,
            scores=scores.get(game_id),
            rules=rules,
        )
        results.append(result)
    return results
