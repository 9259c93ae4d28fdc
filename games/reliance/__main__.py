"""Command line: ``python -m games.reliance {list,inspect,explore,gates,validate}``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from games.reliance.export import export_library
from games.reliance.library import Library, default_library, id_problems, library_counts, quality_gates
from games.reliance.rules import ScenarioError
from games.reliance.solver import Node, Solution
from games.reliance.text import observation_text, rules_text
from trustsim.schema import did_you_mean


def _print_tree(sol: Solution, node: Node, depth: int, seen: set[int]) -> None:
    pad = "    " * depth
    post = "; ".join(
        f"{ch} " + ", ".join(f"{m}={p:.3f}" for m, p in d.items())
        for ch, d in sol.compiled.marginals(node.belief).items()
    )
    print(f"{pad}[node {node.id}] stage {node.stage}  V*={node.v:.4f}  posterior: {post}")
    if node.id in seen:
        print(f"{pad}    (shared node, shown above)")
        return
    seen.add(node.id)
    for a in node.actions:
        mark = "*" if a in node.optimal else " "
        b = sol.test_benefit(node, a)
        extra = f"  B={b:.4f}" if b is not None else ""
        print(
            f"{pad}  {mark} {a:<28} Q*={node.qof(a):.4f}  immediate={node.imm[node.actions.index(a)]:.4f}{extra}"
        )
        for o, p, c in node.branch(a):
            text = observation_text(sol.scenario, o)
            if c is None:
                print(f"{pad}      -> {text} (p={p:.4f}) — end")
            else:
                print(f"{pad}      -> {text} (p={p:.4f})")
                _print_tree(sol, sol.nodes[c], depth + 2, seen)


def cmd_inspect(lib: Library, args: argparse.Namespace) -> int:
    try:
        sol = lib.solution(args.scenario)
    except KeyError:
        hint = did_you_mean(args.scenario, [s.id for s in lib.all])
        print(f"unknown scenario {args.scenario!r}{hint}", file=sys.stderr)
        return 2
    scn = sol.scenario
    print(f"{scn.id}  ({scn.category} / {scn.process}; blueprint {scn.blueprint}; source {scn.source})\n")
    if not args.no_rules:
        print(rules_text(scn), "\n")
    best, seq = sol.best_fixed_sequence()
    print(
        f"V* = {sol.root.v:.4f}; best fixed sequence {list(seq)} costs {best:.4f}; adaptation value {best - sol.root.v:.4f}"
    )
    print(f"{len(sol.nodes)} decision nodes, {sol.n_branches} feedback branches; * = optimal\n")
    _print_tree(sol, sol.root, 0, set())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.reliance", description="Reliance scenario library tools."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="list scenario ids (main, specialised, fixtures) and pairs")
    p_list.add_argument("--pairs", action="store_true", help="list the controlled-history pairs instead")
    p_ins = sub.add_parser("inspect", help="print one scenario's rules, decision tree and values")
    p_ins.add_argument("scenario")
    p_ins.add_argument("--no-rules", action="store_true", help="omit the rules text")
    p_exp = sub.add_parser("explore", help="export every scenario as a decision tree (JSONL)")
    p_exp.add_argument("--out", type=Path, default=Path("outputs/reliance_trees.jsonl"))
    sub.add_parser("gates", help="print the library counts and quality gates (JSON)")
    sub.add_parser(
        "validate",
        help="load and validate every blueprint and scenario file; check that scenario, blueprint, pair and "
        "support ids are unique",
    )
    args = parser.parse_args(argv)
    try:
        lib = default_library()
    except ScenarioError as exc:
        print(f"invalid scenario file: {exc}", file=sys.stderr)
        return 2
    if args.cmd == "list":
        if args.pairs:
            for p in lib.pairs:
                print(f"{p.id}\t{'stable' if p.stable else 'differs'}\t{p.scenario}\tstage {p.stage}")
        else:
            for s in lib.all:
                print(f"{s.id}\t{s.category}\t{s.process}")
        return 0
    if args.cmd == "inspect":
        return cmd_inspect(lib, args)
    if args.cmd == "explore":
        n = export_library(lib.solutions.values(), args.out)
        print(f"wrote {n} decision nodes of {len(lib.solutions)} scenarios to {args.out}")
        return 0
    if args.cmd == "gates":
        print(json.dumps(quality_gates(lib), indent=2))
        return 0
    problems = id_problems(lib)
    if problems:
        for line in problems:
            print(f"invalid library: {line}", file=sys.stderr)
        return 2
    print(f"ok: {library_counts(lib)}; ids unique")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
