"""The scenario library: main and specialised scenarios, fixtures, controlled-history pairs, support set,
and the quality gates computed from the exact reference."""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from games.reliance.loader import BLUEPRINT_DIR, SCENARIO_DIR, _read, load_all, load_scenario_file
from games.reliance.processes import MAIN_PROCESSES
from games.reliance.rules import Scenario
from games.reliance.solver import ZERO_BENEFIT, Node, Solution, solve

PROTECTIVE_KINDS = ("backup",)
INFO_KINDS = ("test", "disclose", "message")
MAX_DIFF_PAIRS = 40
MAX_STABLE_PAIRS = 8
MAX_SUPPORT = 30


@dataclass(frozen=True)
class Pair:
    """A controlled-history pair: same scenario and preceding actions, different evidence."""

    id: str
    scenario: str
    prefix: tuple[str, ...]
    obs_a: tuple[str, ...]
    obs_b: tuple[str, ...]
    stable: bool

    @property
    def stage(self) -> int:
        return len(self.prefix) + 1

    def history(self, side: str) -> list[tuple[str, str]]:
        obs = self.obs_a if side == "a" else self.obs_b
        return list(zip(self.prefix, obs, strict=True))


@dataclass
class Library:
    """Every scenario of the benchmark with its exact solution."""

    main: list[Scenario]
    specialised: list[Scenario]
    fixtures: list[Scenario]
    solutions: dict[str, Solution]
    pairs: list[Pair] = field(default_factory=list)
    support: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[Scenario]:
        return [*self.main, *self.specialised, *self.fixtures]

    def scenario(self, sid: str) -> Scenario:
        for s in self.all:
            if s.id == sid:
                return s
        raise KeyError(sid)

    def solution(self, sid: str) -> Solution:
        return self.solutions[sid]

    def node_at(self, sid: str, history: Iterable[tuple[str, str]]) -> Node:
        sol = self.solutions[sid]
        node: Node | None = sol.root
        for a, o in history:
            assert node is not None
            node = sol.child(node, a, o)
        if node is None:
            raise KeyError(f"history of {sid} ends the scenario")
        return node


def build_library(blueprint_dir: Any = None, scenario_dir: Any = None) -> Library:
    """Load, validate and solve everything; derive pairs and the support set."""
    bdir = blueprint_dir or BLUEPRINT_DIR
    sdir = scenario_dir or SCENARIO_DIR
    scns = load_all(sorted(bdir.glob("*.yaml")))
    fixtures = [s for f in sorted(sdir.glob("*.yaml")) for s in load_scenario_file(f)]
    main = [s for s in scns if s.process in MAIN_PROCESSES]
    special = [s for s in scns if s.process not in MAIN_PROCESSES]
    solutions = {s.id: solve(s) for s in [*main, *special, *fixtures]}
    lib = Library(main, special, fixtures, solutions)
    lib.pairs = make_pairs(lib)
    lib.support = select_support(lib)
    return lib


@functools.cache
def default_library() -> Library:
    """The repository's library (built once per process)."""
    return build_library()


def _pair_candidates(sol: Solution) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]]:
    out = []
    node = sol.root
    prefix: list[str] = []
    obs: list[str] = []
    while node is not None:
        a = node.optimal[0]
        kids = [(o, p, c) for o, p, c in node.branch(a) if c is not None]
        for (o1, _, c1), (o2, _, c2) in itertools.combinations(kids, 2):
            n1, n2 = sol.nodes[c1], sol.nodes[c2]
            if len(n1.optimal) != 1 or len(n2.optimal) != 1:
                continue
            if min(n1.value_range, n2.value_range) < 1e-6 or np.abs(n1.belief - n2.belief).max() < 1e-6:
                continue
            out.append(((*prefix, a), (*obs, o1), (*obs, o2), n1.optimal == n2.optimal))
        if not kids:
            break
        o, _, c = max(kids, key=lambda k: k[1])
        prefix.append(a)
        obs.append(o)
        node = sol.nodes[c]
    return out


def pair_id(scenario: str, decisions_before: int, stable: bool) -> str:
    """``pair.<scenario>.<decisions before the paired one>``, plus ``.stable`` for a stable pair.

    A scenario can yield both a differing and a stable pair at the same stage (one per pool and
    blueprint), so the kind is part of the id.
    """
    return f"pair.{scenario}.{decisions_before}" + (".stable" if stable else "")


def make_pairs(lib: Library) -> list[Pair]:
    """At most one differing and one stable pair per blueprint, along the optimal path; plus fixtures."""
    diff: list[Pair] = []
    stable: list[Pair] = []
    used_diff: set[str] = set()
    used_stable: set[str] = set()
    for scn in sorted(lib.main, key=lambda s: (MAIN_PROCESSES.index(s.process), s.id)):
        for prefix, oa, ob, same in _pair_candidates(lib.solutions[scn.id]):
            pool, used, cap = (
                (stable, used_stable, MAX_STABLE_PAIRS) if same else (diff, used_diff, MAX_DIFF_PAIRS)
            )
            if scn.blueprint in used or len(pool) >= cap:
                continue
            used.add(scn.blueprint)
            pool.append(Pair(pair_id(scn.id, len(prefix), same), scn.id, prefix, oa, ob, same))
    fixture = "worked_example_y"
    if fixture in lib.solutions:
        stable.append(
            Pair(
                "pair.worked_example_y",
                fixture,
                ("delegate_X", "delegate_Y"),
                ("X:success", "Y:success"),
                ("X:success", "Y:failure"),
                True,
            )
        )
    return diff + stable


def select_support(lib: Library) -> list[str]:
    """One main scenario per blueprint (largest adaptation value), blueprints taken round-robin by category."""
    by_cat: dict[str, list[str]] = {}
    best: dict[str, tuple[float, str]] = {}
    for s in lib.main:
        av = lib.solutions[s.id].adaptation_value()
        if s.blueprint not in best or av > best[s.blueprint][0] + 1e-12:
            best[s.blueprint] = (av, s.id)
        by_cat.setdefault(s.category, [])
        if s.blueprint not in by_cat[s.category]:
            by_cat[s.category].append(s.blueprint)
    order: list[str] = []
    for row in itertools.zip_longest(*by_cat.values()):
        order.extend(b for b in row if b is not None)
    return [best[b][1] for b in order[:MAX_SUPPORT]]


def _duplicates(ids: Iterable[str]) -> list[str]:
    counts = Counter(ids)
    return sorted(i for i, n in counts.items() if n > 1)


def blueprint_ids(blueprint_dir: Any = None) -> list[str]:
    """Every blueprint id as written in the blueprint files (one entry per definition)."""
    out = []
    for f in sorted((blueprint_dir or BLUEPRINT_DIR).glob("*.yaml")):
        for bp in _read(f).get("blueprints") or []:
            if isinstance(bp, dict) and "id" in bp:
                out.append(str(bp["id"]))
    return out


def library_counts(lib: Library) -> str:
    """The library's size in one line, as ``python -m games.reliance validate`` prints it and the README
    states it: every scenario, split into main (blueprints × processes), specialised and fixtures."""
    main_bps = {s.blueprint for s in lib.main}
    special_bps = {s.blueprint for s in lib.specialised} - main_bps
    processes = sorted({s.process for s in lib.main})
    categories = {s.category for s in lib.main}
    return (
        f"{len(lib.all)} scenarios: {len(lib.main)} main ({len(main_bps)} blueprints in {len(categories)} "
        f"categories × {len(processes)} processes), {len(lib.specialised)} specialised (from "
        f"{len(special_bps)} more blueprints; {len(main_bps | special_bps)} in all), {len(lib.fixtures)} "
        f"worked-example fixtures; game.set=all plays the {len(lib.main) + len(lib.specialised)} main and "
        f"specialised ones; {len(lib.pairs)} pairs, {len(lib.support)} support scenarios"
    )


def id_problems(lib: Library, blueprint_dir: Any = None) -> list[str]:
    """Every id that is not unique: scenarios, blueprints, pairs, support entries, and pair ids that
    shadow a scenario id (``game.scenarios`` accepts both). Empty when every id is unique."""
    problems = []
    scenario_ids = [s.id for s in lib.all]
    for kind, ids in (
        ("scenario", scenario_ids),
        ("blueprint", blueprint_ids(blueprint_dir)),
        ("pair", [p.id for p in lib.pairs]),
        ("support scenario", lib.support),
    ):
        dups = _duplicates(ids)
        if dups:
            problems.append(f"{len(dups)} duplicate {kind} id(s): {', '.join(dups)}")
    clash = sorted({p.id for p in lib.pairs} & set(scenario_ids))
    if clash:
        problems.append(f"pair id(s) equal to a scenario id: {', '.join(clash)}")
    return problems


def _root_flags(lib: Library, scn: Scenario) -> dict[str, Any]:
    sol = lib.solutions[scn.id]
    root = sol.root
    acts = scn.actions
    opt = set(root.optimal)
    tests = [a for a in root.actions if acts[a].counterpart is not None]
    benefits = {a: sol.test_benefit(root, a) for a in tests}
    supports = [a for a in root.actions if acts[a].kind == "support"]
    protective = [a for a in root.actions if acts[a].kind in PROTECTIVE_KINDS]
    return {
        "unique_first": len(opt) == 1,
        "has_test": bool(tests),
        "test_optimal": bool(opt & set(tests)),
        "myopic_differs": not (opt & set(root.myopic)),
        "adaptation_pays": sol.adaptation_value() > 1e-9,
        "over_protection": bool(protective) and not (opt & set(protective)),
        "zero_value_test": any(abs(b) < ZERO_BENEFIT for b in benefits.values() if b is not None),
        "useful_test": bool(opt & set(tests))
        and any(b > ZERO_BENEFIT for b in benefits.values() if b is not None),
        "mis_targeted_support": len(supports) > 1 and bool(opt & set(supports)) and not set(supports) <= opt,
    }


GATES = {
    # name: (minimum share of main scenarios, maximum share) — the library must exercise every failure mode.
    "unique_first": (0.80, 1.0),
    "test_optimal_among_tests": (0.15, 0.85),
    "myopic_differs": (0.10, 1.0),
    "adaptation_pays": (0.30, 1.0),
    "over_protection": (0.10, 1.0),
    "zero_value_test": (0.02, 1.0),
    "useful_test": (0.05, 1.0),
    "mis_targeted_support": (0.02, 1.0),
}


def quality_gates(lib: Library) -> dict[str, Any]:
    """Counts, shares and pass/fail of every gate over the main scenarios (plus library counts)."""
    flags = [_root_flags(lib, s) for s in lib.main]
    n = len(flags)
    with_test = [f for f in flags if f["has_test"]]
    shares = {
        "unique_first": sum(f["unique_first"] for f in flags) / n,
        "test_optimal_among_tests": sum(f["test_optimal"] for f in with_test) / max(1, len(with_test)),
        "myopic_differs": sum(f["myopic_differs"] for f in flags) / n,
        "adaptation_pays": sum(f["adaptation_pays"] for f in flags) / n,
        "over_protection": sum(f["over_protection"] for f in flags) / n,
        "zero_value_test": sum(f["zero_value_test"] for f in flags) / n,
        "useful_test": sum(f["useful_test"] for f in flags) / n,
        "mis_targeted_support": sum(f["mis_targeted_support"] for f in flags) / n,
    }
    gates = {
        k: {"share": v, "min": GATES[k][0], "max": GATES[k][1], "pass": GATES[k][0] <= v <= GATES[k][1]}
        for k, v in shares.items()
    }
    counts = {
        "main": n,
        "blueprints": len({s.blueprint for s in lib.main}),
        "categories": len({s.category for s in lib.main}),
        "processes": len({s.process for s in lib.main}),
        "specialised": len(lib.specialised),
        "pairs": len(lib.pairs),
        "stable_pairs": sum(p.stable for p in lib.pairs),
        "support": len(lib.support),
        "decision_nodes": sum(len(sol.nodes) for sol in lib.solutions.values()),
        "feedback_branches": sum(sol.n_branches for sol in lib.solutions.values()),
        "scenarios_with_test": len(with_test),
    }
    return {"counts": counts, "gates": gates, "all_pass": all(g["pass"] for g in gates.values())}
