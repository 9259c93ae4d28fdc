"""``python -m analysis view DIR... --out SITE [--serve [PORT]] [--reference]``: a static site to browse runs."""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import sys
import time
from pathlib import Path

from analysis.rundirs import RunDirError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``view`` subcommand."""
    p = subparsers.add_parser(
        "view",
        help="a self-contained browser viewer of runs, sweeps and the reference logs (opens from file://)",
        description="Write a static site (no server, no network needed) that browses every run found: an "
        "index, escape-room games round by round, reliance decision paths, arena move grids, trust-game "
        "exchanges, search across reasoning, each LLM decision's exact request and raw response (read-only from the "
        "request store), and the analysis reports found next to the runs.",
    )
    p.add_argument(
        "dirs", nargs="*", metavar="DIR", help="run or sweep directories, or reference-log folders"
    )
    p.add_argument("--out", required=True, type=Path, metavar="SITE", help="where the site is written")
    p.add_argument(
        "--serve",
        nargs="?",
        const=8000,
        type=int,
        metavar="PORT",
        help="also serve the site on 127.0.0.1:PORT (default 8000) until Ctrl-C",
    )
    p.add_argument("--reference", action="store_true", help="include the reference study's shipped logs")
    p.add_argument(
        "--store",
        type=Path,
        metavar="PATH",
        help="the request store (file, or llm.store_dir folder) holding the runs' LLM requests, read-only; "
        "default: the one each run's configuration names, looked for from here and above the run",
    )
    p.add_argument("--include-incomplete", action="store_true", default=True, help=argparse.SUPPRESS)
    p.add_argument("--force", action="store_true", help="write into an --out folder that holds other files")
    p.set_defaults(func=run)
    return p


def serve(site: Path, port: int) -> None:
    """Serve the site on loopback only (the files are the same as the ``file://`` site)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"analysis view: serving {site} on http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            httpd.serve_forever()


def run(args: argparse.Namespace) -> int:
    """Build the site (and serve it when asked)."""
    from analysis.view.site import build_site

    reference = []
    if args.reference:
        from analysis.reference_data import reference_dir

        reference.append(reference_dir())
    missing = [d for d in args.dirs if not Path(d).exists()]
    if missing:
        raise RunDirError(f"no such directory: {', '.join(missing)}")
    if not args.dirs and not reference:
        raise RunDirError("nothing to show: give run/sweep directories or --reference")
    started = time.perf_counter()
    if args.store is not None and not args.store.exists():
        raise RunDirError(f"no request store at {args.store} (--store)")
    stats = build_site(args.dirs, args.out, reference=reference, store=args.store)
    for problem in stats.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if not stats.runs:
        raise RunDirError(f"no runs found under {', '.join(map(str, args.dirs)) or 'the reference logs'}")
    index = (args.out / "index.html").resolve()
    print(
        f"analysis view: {stats.runs} run(s), {stats.games} escape-room game(s), {stats.reports} report(s), "
        f"{stats.files} data files in {time.perf_counter() - started:.1f} s -> {index.as_uri()}"
    )
    if args.serve is not None:
        serve(args.out, args.serve)
    return 0
