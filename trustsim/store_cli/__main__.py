"""``python -m trustsim.store_cli [--path STORE|DIR] {info,prune,merge,recover}``: the request store's size and
counts; pruning; merging shards (``llm.store_dir``) into one store; recovering the readable answers of a
damaged store into a new one. Every failure is one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from trustsim.llm.store import StoreDamaged
from trustsim.store_cli.manage import StoreCommandError, damage_message, merge, prune, recover, store_info

DEFAULT_STORE = "outputs/request_store.sqlite"  # conf/llm/default.yaml llm.store_path


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def _table(rows: list[dict[str, Any]], key: str) -> list[str]:
    header = (key.upper(), "RESPONSES", "PROMPT_TOKENS", "COMPLETION_TOKENS", "COST")
    cells = [
        (str(r[key]), str(r["responses"]), str(r["prompt_tokens"]), str(r["completion_tokens"]),
         f"${r['cost_usd']:.4f}")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *cells]
    ]


def _info(args: argparse.Namespace) -> int:
    info = store_info(args.path)
    if args.json:
        print(json.dumps(asdict(info), indent=2))
        return 0
    shards = f" in {info.shards} shard(s)" if info.shards else ""
    print(
        f"request store {info.path}: {_size(info.bytes)}, {info.responses} stored response(s){shards}, "
        f"recorded spend ${info.cost_usd:.4f}"
    )
    if info.writers:
        print(f"being written now: {', '.join(info.writers)}")
    for key, rows in (("model", info.by_model), ("date", info.by_date), ("purpose", info.by_purpose)):
        if rows:
            print(f"by {key}{' (UTC, when stored)' if key == 'date' else ''}:")
            print("\n".join(_table(rows, key)))
    return 0


def _prune(args: argparse.Namespace) -> int:
    result = prune(
        args.path,
        models=args.model,
        older_than_days=args.older_than,
        dry_run=args.dry_run,
        vacuum=args.vacuum,
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for model in result["unknown_models"]:
        known = ", ".join(result["known_models"]) or "none"
        print(
            f"warning: no stored response of model {model!r} (models in the store: {known})", file=sys.stderr
        )
    total = sum(m["responses"] for m in result["matched"])
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{verb} {result['deleted'] if not args.dry_run else total} response(s) from {result['path']}")
    for m in result["matched"]:
        print(f"  {m['model']}: {m['responses']} (${m['cost_usd']:.4f} of stored spend)")
    if not args.dry_run and total and not args.vacuum:
        print("(the file shrinks after --vacuum; runs re-send the deleted requests when they need them)")
    return 0


def _merge(args: argparse.Namespace) -> int:
    result = merge(args.sources, args.out)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for r in result["sources"]:
        conflicts = f", {r['conflicts']} with a different answer (kept the first)" if r["conflicts"] else ""
        print(
            f"  {r['source']}: {r['responses']} read, {r['added']} added, {r['duplicates']} duplicate(s)"
            f"{conflicts}"
        )
    print(
        f"merged {len(result['sources'])} store(s) into {result['out']}: {result['added']} response(s) added, "
        f"{result['responses']} in all"
    )
    return 0


def _recover(args: argparse.Namespace) -> int:
    result = recover(args.path, args.out)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"recovered {result['recovered']} response(s) from {result['source']} into {result['out']}; "
        f"{result['unreadable']} unreadable, {result['refused']} not a whole response (a torn answer); "
        "the requests of both are sent again when a run needs them"
    )
    if result["integrity"] == "ok" and not result["unreadable"] and not result["refused"]:
        print("(the source passed its checks: every response was copied)")
    elif result["integrity"] != "ok":
        print(f"(the source's first problem: {result['integrity']})")
    print(f"next: run with llm.store_path={result['out']} (the damaged file was left as it is)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trustsim.store_cli",
        description="The request store: size and counts; pruning; merging; recovering a damaged store.",
    )
    parser.add_argument(
        "--path",
        default=DEFAULT_STORE,
        help=f"the store file (llm.store_path; {DEFAULT_STORE}) or shard directory (llm.store_dir)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="size, and counts by model, by date and by purpose")
    p = sub.add_parser("prune", help="delete stored responses by model and/or age")
    p.add_argument(
        "--model", action="append", default=[], help="model as stored (e.g. openai/gpt-4o); repeatable"
    )
    p.add_argument("--older-than", type=float, metavar="DAYS", help="stored more than DAYS days ago")
    p.add_argument("--dry-run", action="store_true", help="show what would be deleted, delete nothing")
    p.add_argument("--vacuum", action="store_true", help="compact the file afterwards")
    m = sub.add_parser("merge", help="merge stores and shard directories into one store (dedup by key)")
    m.add_argument("sources", nargs="+", help="store files and/or shard directories (llm.store_dir)")
    m.add_argument("--out", required=True, help="the merged store (created, or added to)")
    r = sub.add_parser(
        "recover", help="copy every readable answer of a damaged store (--path) into a new store"
    )
    r.add_argument("--out", help="the new store (default: <name>-recovered.sqlite beside the damaged one)")
    args = parser.parse_args(argv)
    try:
        return {"info": _info, "prune": _prune, "merge": _merge, "recover": _recover}[args.command](args)
    except StoreCommandError as exc:
        message = str(exc)
    except StoreDamaged as exc:
        message = damage_message(exc)
    except (sqlite3.Error, OSError) as exc:  # a store damaged in a way no check caught, a folder gone...
        message = f"cannot read or write the store at {args.path}: {type(exc).__name__}: {exc}"
        if isinstance(exc, sqlite3.Error):
            message += f"; if it is damaged: python -m trustsim.store_cli --path {args.path} recover"
    print(f"trustsim.store_cli: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
