"""``python -m trustsim.extract SRC... --out DIR [--model smollm2]``: post-hoc confidence extraction.

Every request goes through the LLM layer's request store, so an interrupted extraction resumes by
re-running the same command (finished requests are replayed, not re-sent).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trustsim.contract import games
from trustsim.errors import TrustsimError
from trustsim.extract.extractor import extract
from trustsim.extract.items import ReasoningItem
from trustsim.extract.output import write_outputs
from trustsim.extract.sources import SourceError, default_kind, reasoning_sources, run_dirs
from trustsim.llm import build_client, parse_llm_config, parse_model_config
from trustsim.progress import make_progress
from trustsim.rundir import check_run_dir, print_data_warnings

CONF = Path(__file__).resolve().parents[2] / "conf"


def collect(kind: str, sources: list[Path], limit: int | None) -> tuple[list[ReasoningItem], str]:
    """All items of the given sources, in a stable order, and their game type (the game that declares the
    ``kind``: ``GameSpec.reasoning``)."""
    known = reasoning_sources()
    if kind not in known:
        raise SourceError(f"unknown source kind {kind!r}")
    game, source = known[kind]
    items: list[ReasoningItem] = []
    for root in sources:
        for folder in source.find(root) if source.find is not None else run_dirs(root, kind):
            items.extend(source.read(folder))
    return (items[:limit] if limit else items), game


def load_model(name: str | None, path: Path | None) -> dict:
    """The model config: ``conf/model/<name>.yaml`` or an explicit YAML file."""
    file = path or CONF / "model" / f"{name}.yaml"
    if not file.exists():
        raise SourceError(f"model config {file} not found (use --model NAME from conf/model or --model-file)")
    return yaml.safe_load(file.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit code (damaged inputs are reported as ``warning:`` lines)."""
    with print_data_warnings():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="python -m trustsim.extract", description=__doc__.splitlines()[0])
    ap.add_argument("sources", nargs="+", type=Path, help="log directories (searched recursively)")
    ap.add_argument("--kind", choices=list(reasoning_sources()), default=default_kind())
    ap.add_argument("--out", required=True, type=Path, help="output directory (a run directory for analysis)")
    ap.add_argument(
        "--model", default="smollm2", help="extractor model: conf/model/<name>.yaml (default smollm2)"
    )
    ap.add_argument("--model-file", type=Path, help="extractor model config YAML (overrides --model)")
    ap.add_argument("--store", type=Path, help="request store path (default: conf/llm/default.yaml's)")
    ap.add_argument("--limit", type=int, help="extract only the first N items (a quick look)")
    args = ap.parse_args(argv)
    try:
        check_run_dir(args.out, key="--out")  # never a folder of the user's own files; before any request
        items, game = collect(args.kind, args.sources, args.limit)
        if not items:
            raise SourceError("no reasoning texts found in the sources")
        model = parse_model_config(load_model(args.model, args.model_file))
        llm_cfg = yaml.safe_load((CONF / "llm" / "default.yaml").read_text(encoding="utf-8")) or {}
        if args.store:
            llm_cfg["store_path"] = str(args.store)
        client = build_client(model, parse_llm_config(llm_cfg))
        name = model.name
        bar = make_progress(len(items), f"extract ({name})", "auto")
        try:
            results = asyncio.run(
                extract(
                    items,
                    client,
                    name,
                    on_done=lambda _: bar.update(1),
                )
            )
        finally:
            bar.close()
            asyncio.run(client.aclose())
        write_outputs(
            args.out,
            results,
            source=f"extracted:{name}",
            game_type=game,
            prediction_columns=games()[game].table_columns("predictions"),
            extractor_model=name,
            sources=[str(s) for s in args.sources],
            llm_stats=client.stats(),
        )
    except (SourceError, TrustsimError) as exc:
        print(f"extract: {exc}", file=sys.stderr)
        return 2
    n = sum(r.p is not None for r in results)
    print(f"extract: {len(results)} texts, {n} with a probability, {len(results) - n} missing -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
