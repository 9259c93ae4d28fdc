"""Runs for the viewer: the run's tables (and decision events) → page data. The reliance, arena and trust-game
pages, and :func:`table_page`, the generic page of a game that shows its tables (the families declare which:
:mod:`analysis.family_registry`)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from analysis.family_registry import ViewPage
from trustsim.rundir import Run, read_table

TABLE_ROWS = 500  # rows of a table a generic page shows (the first ones)


def records(run: Run, name: str) -> list[dict[str, Any]]:
    """A table's rows as plain dicts (missing cells become None; no cell keys attached)."""
    df = read_table(run, name, cell_keys=False)
    if df is None or df.empty:
        return []
    rows = df.to_dict("records")
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                row[key] = None
            elif hasattr(value, "item"):
                row[key] = value.item()
    return rows


def _pairs(text: Any) -> dict[str, float]:
    """``a=1.0;b=2.5`` → {"a": 1.0, "b": 2.5}."""
    out: dict[str, float] = {}
    for part in str(text or "").split(";"):
        name, _, value = part.partition("=")
        if name and value:
            try:
                out[name] = float(value)
            except ValueError:
                continue
    return out


# -- reliance ---------------------------------------------------------------------------------------------
def reliance_scenarios(run: Run, events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each scenario's decision path: per stage the evidence so far, the choice, Q* of every action, regret
    and stated confidence (reasoning and raw text from the stage events)."""
    texts: dict[tuple[Any, ...], dict[str, Any]] = {}
    for e in events:
        if e.get("type") == "stage":
            texts[(e.get("session"), e.get("item"), e.get("stage"))] = {
                "raw": e.get("raw"),
                "reasoning": e.get("reasoning"),
                "request": e.get("request"),
            }
    scenarios: dict[tuple[Any, Any], dict[str, Any]] = {}
    for row in records(run, "scenarios.csv"):
        key = (row.get("session"), row.get("item"))
        scenarios[key] = {
            "session": row.get("session"),
            "item": row.get("item"),
            "scenario": row.get("scenario"),
            "category": row.get("category"),
            "process": row.get("process"),
            "pair": row.get("pair"),
            "all_optimal": row.get("all_optimal"),
            "total_cost": row.get("total_cost"),
            "v_star_root": row.get("v_star_root"),
            "stages": [],
        }
    for row in records(run, "stages.csv"):
        key = (row.get("session"), row.get("item"))
        scenario = scenarios.setdefault(
            key, {"session": key[0], "item": key[1], "scenario": row.get("scenario"), "stages": []}
        )
        extra = texts.get((row.get("session"), row.get("item"), row.get("stage")), {})
        scenario["stages"].append(
            {
                "stage": row.get("stage"),
                "history": row.get("history") or "",
                "observation": row.get("observation"),
                "action": row.get("action"),
                "raw_action": row.get("raw_action"),
                "valid": row.get("valid"),
                "invalid_reason": row.get("invalid_reason"),
                "optimal": row.get("optimal"),
                "optimal_actions": row.get("optimal_actions"),
                "q_values": _pairs(row.get("q_values")),
                "regret": row.get("regret"),
                "confidence": row.get("confidence"),
                "p_exact": row.get("p_exact"),
                "reasoning": extra.get("reasoning"),
                "raw": extra.get("raw"),
                "request": extra.get("request"),
            }
        )
    return list(scenarios.values())


# -- arena ------------------------------------------------------------------------------------------------
def arena_matches(
    run: Run, events: Iterable[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Match list and per-match move grids: per round each seat's move, stated P(opponent cooperates) and what
    the opponent did (reasoning from the move events)."""
    reasons = {
        (e.get("match"), e.get("round"), e.get("seat")): (e.get("reasoning"), e.get("raw"), e.get("request"))
        for e in events
        if e.get("type") == "move"
    }
    matches = [
        {
            k: row.get(k)
            for k in (
                "match",
                "session",
                "player_a",
                "model_a",
                "player_b",
                "model_b",
                "rounds",
                "payoff_a",
                "payoff_b",
                "coop_a",
                "coop_b",
            )
        }
        for row in records(run, "matches.csv")
    ]
    grids: dict[str, dict[str, Any]] = defaultdict(lambda: {"rounds": []})
    for row in records(run, "moves.csv"):
        match = str(row.get("match"))
        grid = grids[match]
        if row.get("seat") == "A" or not grid["rounds"] or grid["rounds"][-1]["round"] != row.get("round"):
            grid["rounds"].append({"round": row.get("round"), "seats": {}})
        reasoning, raw, request = reasons.get(
            (row.get("match"), row.get("round"), row.get("seat")), (None, None, None)
        )
        grid["rounds"][-1]["seats"][row.get("seat")] = {
            "player": row.get("player"),
            "move": row.get("move"),
            "intended": row.get("intended"),
            "opponent_move": row.get("opponent_move"),
            "p": row.get("p_opponent_cooperates"),
            "payoff": row.get("payoff"),
            "valid": row.get("valid"),
            "invalid_reason": row.get("invalid_reason"),
            "reasoning": reasoning or None,
            "raw": raw or None,
            "request": request,
        }
    return matches, dict(grids)


# -- trust game -------------------------------------------------------------------------------------------
EXCHANGE_FIELDS = (
    "pair", "round", "trustor", "trustee", "endowment", "multiplier", "sent", "received", "returned",
    "return_ratio", "trustor_payoff", "trustee_payoff", "valid", "sent_invalid_reason", "sent_raw",
    "returned_invalid_reason", "returned_raw", "expected_return", "p_next_send_at_least",
)  # fmt: skip


def _pair_number(pair: Any) -> int | None:
    """A pair's 1-based number: the table's ``pair``, or an event's pair id ``s<session>p<pair>``
    (docs/trust_game.md)."""
    m = re.fullmatch(r"s\d+p(\d+)", str(pair))
    try:
        return int(m[1]) if m else int(pair)
    except (TypeError, ValueError):
        return None


def trust_game_sessions(run: Run, events: Iterable[dict[str, Any]] = ()) -> dict[int, list[dict[str, Any]]]:
    """Exchanges per session, grouped by pair and ordered by round, with each role's request key and whether a
    model answered (from the exchange events)."""
    keys = {
        (e.get("session"), _pair_number(e.get("pair")), e.get("round")): [
            e.get(role) or {} for role in ("trustor", "trustee")
        ]
        for e in events
        if e.get("type") == "exchange"
    }
    sessions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in records(run, "exchanges.csv"):
        session = int(row.get("session") or 0)
        sent, returned = keys.get((session, _pair_number(row.get("pair")), row.get("round")), ({}, {}))
        sessions[session].append(
            {k: row.get(k) for k in EXCHANGE_FIELDS}
            | {
                "sent_request": sent.get("request"),
                "sent_by_model": bool(sent.get("raw")),
                "returned_request": returned.get("request"),
                "returned_by_model": bool(returned.get("raw")),
            }
        )
    return dict(sessions)


def invalid_share(rows: list[dict[str, Any]]) -> float | None:
    """The share of rows with ``valid`` false among those that say (None when none does)."""
    flags = [r.get("valid") for r in rows if r.get("valid") is not None]
    return round(sum(not bool(v) for v in flags) / len(flags), 4) if flags else None


def reliance_page(w: Any, run: Run, events: Iterator[dict[str, Any]], row: dict[str, Any]) -> dict[str, Any]:
    """The viewer page of a reliance run: its scenarios' decision paths."""
    key = row["key"]
    scenarios = reliance_scenarios(run, list(events))
    w.put(f"r/{key}/scenarios.js", f"scenarios/{key}", scenarios)
    requests = w.stores.for_run(run)
    for i, sc in enumerate(scenarios):
        keys = [s["request"] for s in sc["stages"]]
        requests.write(w, f"r/{key}/q/scenario-{i}.js", f"req/{key}/scenario-{i}", keys)
    stages = [s for sc in scenarios for s in sc["stages"]]
    row["invalid_share"] = invalid_share(stages)
    search = [
        [sc["item"], s["stage"], s["reasoning"]]
        for sc in scenarios
        for s in sc["stages"]
        if s.get("reasoning")
    ]
    w.put(f"r/{key}/search.js", f"search/{key}", search)
    return {
        "scenarios": [
            {k: sc.get(k) for k in ("item", "category", "process", "pair", "all_optimal", "total_cost")}
            | {"stages": len(sc["stages"])}
            for sc in scenarios
        ],
        "requests": requests.page_info(),
    }


def arena_page(w: Any, run: Run, events: Iterator[dict[str, Any]], row: dict[str, Any]) -> dict[str, Any]:
    """The viewer page of an arena run: its matches, each a round-by-round grid."""
    key = row["key"]
    matches, grids = arena_matches(run, events)
    requests = w.stores.for_run(run)
    for match, grid in grids.items():
        w.put(f"r/{key}/m/{match}.js", f"match/{key}/{match}", grid)
        keys = [s["request"] for r in grid["rounds"] for s in r["seats"].values()]
        requests.write(w, f"r/{key}/q/match-{match}.js", f"req/{key}/match-{match}", keys)
    cells = [s for g in grids.values() for r in g["rounds"] for s in r["seats"].values()]
    row["invalid_share"] = invalid_share(cells)
    return {"matches": matches, "requests": requests.page_info()}


def trust_game_page(
    w: Any, run: Run, events: Iterator[dict[str, Any]], row: dict[str, Any]
) -> dict[str, Any]:
    """The viewer page of a trust-game run: its sessions' exchanges."""
    key = row["key"]
    sessions = trust_game_sessions(run, events)
    requests = w.stores.for_run(run)
    for session, exchanges in sessions.items():
        w.put(f"r/{key}/tg/{session}.js", f"tg/{key}/{session}", exchanges)
        keys = [x[k] for x in exchanges for k in ("sent_request", "returned_request")]
        requests.write(w, f"r/{key}/q/tg-{session}.js", f"req/{key}/tg-{session}", keys)
    row["invalid_share"] = invalid_share([x for rows in sessions.values() for x in rows])
    return {
        "sessions": [
            {"session": s, "exchanges": len(x), "pairs": len({e["pair"] for e in x})}
            for s, x in sorted(sessions.items())
        ],
        "requests": requests.page_info(),
    }


def table_page(*tables: str) -> ViewPage:
    """A page that shows the run's tables (``<name>.csv``, the first :data:`TABLE_ROWS` rows each): the view a
    game declares when its tables say enough (and the viewer's page for a game that declares none)."""

    def page(w: Any, run: Run, events: Iterator[dict[str, Any]], row: dict[str, Any]) -> dict[str, Any]:
        shown = []
        flags: list[dict[str, Any]] = []
        for name in tables:
            rows = records(run, f"{name}.csv")
            if not rows:
                continue
            flags.extend(r for r in rows if "valid" in r)
            columns = list(rows[0])
            shown.append(
                {
                    "name": name,
                    "columns": columns,
                    "rows": [[r.get(c) for c in columns] for r in rows[:TABLE_ROWS]],
                    "total": len(rows),
                }
            )
        row["invalid_share"] = invalid_share(flags)
        return {"tables": shown}

    return ViewPage(page)
