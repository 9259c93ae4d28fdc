"""Build the viewer's static site: page assets plus data files loaded on demand.

Data files are small scripts (``TS.put(key, data)``) rather than JSON, because a page opened from ``file://``
may load scripts but not fetch files. The index holds one row per run; each run has its own folder with a
run page file, one file per escape-room game (or arena match, trust-game session), and a search file, so the
browser only ever loads what is shown.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis.family_registry import families
from analysis.view.escape_room import reference_games, write_games
from analysis.view.family_pages import table_page
from analysis.view.markdown import markdown_to_html
from analysis.view.requests import REFERENCE_NOTE, StoreCache
from trustsim.rundir import Run, RunDirError, discover_runs, iter_events

ASSETS = Path(__file__).parent / "assets"


@dataclass
class SiteStats:
    """What a build wrote."""

    runs: int = 0
    games: int = 0
    files: int = 0
    reports: int = 0
    problems: list[str] = field(default_factory=list)


class SiteWriter:
    """Writes ``TS.put`` data files under ``<site>/data``; ``stores`` opens the runs' request stores
    (read-only) for the pages that show each decision's request."""

    def __init__(self, site: Path, store: Path | None = None) -> None:
        self.site = site
        self.stats = SiteStats()
        self.stores = StoreCache(store)

    def put(self, rel: str, key: str, data: Any) -> None:
        path = self.site / "data" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        path.write_text(f"TS.put({json.dumps(key)},{blob});\n", encoding="utf-8")
        self.stats.files += 1


def run_key(run_id: str, path: Path) -> str:
    """A file-name-safe, collision-free key: the run id plus a digest of its directory."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)[:60]
    return f"{safe}-{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:6]}"


def _sweep_of(path: Path, roots: list[Path]) -> str | None:
    """The sweep directory a job belongs to (the nearest parent with jobs.csv or multirun.yaml), named by its
    path under the directory given (``sweeps/2026-12-02/04-51-47-710005`` under ``outputs/``)."""
    for parent in path.parents:
        if (parent / "jobs.csv").exists() or (parent / "multirun.yaml").exists():
            root = next((r for r in roots if parent.is_relative_to(r) and parent != r), None)
            return parent.relative_to(root).as_posix() if root is not None else parent.name
        if parent in roots:
            break
    return None


def started_utc(text: Any) -> str | None:
    """A manifest's start time as ``YYYY-MM-DD HH:MM`` in UTC (None when it records none readable)."""
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M")


_FOLDER_STAMP = re.compile(r"_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})\d{2}$")


def folder_date(name: str) -> str | None:
    """The date a reference-study run folder is named with (``..._20260520_012127`` → ``2026-05-20 01:21``)."""
    m = _FOLDER_STAMP.search(name)
    return f"{m[1]}-{m[2]}-{m[3]} {m[4]}:{m[5]}" if m else None


def _index_row(run: Run, key: str, sweep: str | None) -> dict[str, Any]:
    m = run.manifest
    raw = m.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    # a job that failed at start has a short manifest: fall back to its configuration
    cell = {
        "model": (config.get("model") or {}).get("name"),
        "agent": (config.get("agent") or {}).get("name"),
        "memory": (config.get("memory") or {}).get("mode"),
        "schedule": (config.get("schedule") or {}).get("name"),
    } | {k: v for k, v in run.cell.items() if v is not None}
    llm = m.get("llm") or {}
    counts = m.get("counts") or {}
    return {
        "key": key,
        "source": "engine",
        "date": started_utc((m.get("timings") or {}).get("started")),
        "run_id": run.run_id,
        "family": run.game or (config.get("game") or {}).get("type") or "?",
        "experiment": m.get("experiment") or config.get("name"),
        "model": cell.get("model"),
        "agent": cell.get("agent") or cell.get("trustor"),
        "memory": cell.get("memory"),
        "schedule": cell.get("schedule"),
        "prompt": cell.get("prompt"),
        "seed": m.get("seed", config.get("seed")),
        "status": run.status,
        "failure": run.failure_reason or None,
        "sweep": sweep,
        "path": str(run.path),
        "games": counts.get("games")
        or counts.get("scenarios")
        or counts.get("matches")
        or counts.get("pairs"),
        "decisions": counts.get("decisions") or counts.get("exchanges"),
        "invalid_share": None,
        "calls_sent": llm.get("calls_sent"),
        "cache_hits": llm.get("cache_hits"),
        "tokens": (llm.get("prompt_tokens") or 0) + (llm.get("completion_tokens") or 0),
        "cost_usd": llm.get("cost_usd"),
    }


def _engine_run(w: SiteWriter, run: Run, row: dict[str, Any]) -> dict[str, Any]:
    """The run page's data, as the run's game family declares (:mod:`analysis.family_registry`); a game without a
    declaration shows its tables."""
    events = iter_events(run.path) if run.has_events and (run.path / "events.jsonl").exists() else iter(())
    family = families().get(row["family"])
    if family is not None and family.view is not None:
        return family.view.page(w, run, events, row)
    return table_page(*sorted(p.stem for p in run.path.glob("*.csv"))).page(w, run, events, row)


def _reference_runs(roots: list[Path], w: SiteWriter) -> Iterator[dict[str, Any]]:
    from analysis.escape_room.reference import import_reference_run
    from trustsim.rundir.reference_logs import ReferenceLogError, find_reference_runs, read_reference_run

    seen: set[Path] = set()
    for root in roots:
        for folder in find_reference_runs(root):
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            try:
                logged = read_reference_run(folder)
                imported = import_reference_run(logged)
            except ReferenceLogError as exc:
                w.stats.problems.append(f"{folder}: {exc}")
                continue
            info, settings = imported.run, logged.settings
            d_list = ((settings.get("dummy_config") or {}).get("D") or {}).get("correctness_list") or []
            key = run_key(info["run_id"], folder)
            row = {
                "key": key,
                "source": "reference",
                "date": folder_date(folder.name),
                "run_id": info["run_id"],
                "family": "escape_room",
                "experiment": settings.get("experiment_name") or folder.name,
                "model": info.get("model"),
                "agent": "llm (reference study)",
                "memory": info.get("memory"),
                "schedule": info.get("schedule"),
                "prompt": "reference",
                "seed": None,
                "status": "complete",
                "failure": None,
                "sweep": folder.parent.name,
                "path": str(folder),
                "games": None,
                "decisions": None,
                "invalid_share": None,
                "calls_sent": None,
                "cache_hits": None,
                "tokens": None,
                "cost_usd": None,
            }
            page = write_games(w, key, reference_games(logged, [bool(x) for x in d_list]), row)
            yield row | {"page": page | {"requests": {"store": None, "note": REFERENCE_NOTE}}}


def _reports(roots: list[Path], site: Path, w: SiteWriter) -> list[dict[str, Any]]:
    """Copy every analysis report (report.md and its figures) found under the inputs into the site."""
    found: list[Path] = []
    for root in roots:
        candidates = [root / "report.md"] if root.is_file() else list(root.rglob("report.md"))
        found.extend(p for p in candidates if p.exists())
    reports = []
    for n, md in enumerate(sorted(set(found)), start=1):
        dest = site / "reports" / str(n)
        dest.mkdir(parents=True, exist_ok=True)
        figures = []
        for fig in sorted(md.parent.rglob("*.png")):
            rel = fig.relative_to(md.parent)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(fig, dest / rel)
            figures.append(rel.as_posix())
        body = markdown_to_html(md.read_text(encoding="utf-8", errors="replace"))
        title = html.escape(str(md.parent))
        (dest / "index.html").write_text(
            f'<!doctype html><meta charset="utf-8"><title>{title}</title>'
            f'<link rel="stylesheet" href="../../assets/style.css"><main class="report">'
            f'<p><a href="../../index.html">← all runs</a></p><h1>Report: {title}</h1>{body}</main>\n',
            encoding="utf-8",
        )
        reports.append(
            {"n": n, "path": str(md.parent), "figures": figures, "href": f"reports/{n}/index.html"}
        )
        w.stats.reports += 1
    return reports


def build_site(
    dirs: Iterable[str | Path],
    out: str | Path,
    *,
    reference: Iterable[str | Path] = (),
    include_incomplete: bool = True,
    store: str | Path | None = None,
) -> SiteStats:
    """Write the viewer for every run, sweep and reference-log folder found under ``dirs`` into ``out``
    (``store``: the request store of every run's LLM decisions, instead of the one each run's configuration
    names)."""
    site = Path(out)
    site.mkdir(parents=True, exist_ok=True)
    (site / "assets").mkdir(exist_ok=True)
    for asset in ASSETS.iterdir():
        if asset.suffix in (".js", ".css"):
            shutil.copyfile(asset, site / "assets" / asset.name)
    shutil.copyfile(ASSETS / "index.html", site / "index.html")
    w = SiteWriter(site, Path(store) if store is not None else None)
    roots = [Path(d) for d in dirs]
    rows: list[dict[str, Any]] = []
    engine_roots = [r for r in roots if r.exists()]
    if engine_roots:
        discovery = discover_runs(engine_roots, include_incomplete=include_incomplete)
        resolved_roots = [r.resolve() for r in engine_roots]
        for run in discovery.runs:
            key = run_key(run.run_id, run.path)
            row = _index_row(run, key, _sweep_of(run.path.resolve(), resolved_roots))
            try:
                page = _engine_run(w, run, row)
            except RunDirError as exc:
                w.stats.problems.append(str(exc))
                page = {"error": str(exc)}
            w.put(f"r/{key}/run.js", f"run/{key}", {"row": row, **page})
            rows.append(row)
    for row in _reference_runs(engine_roots + [Path(r) for r in reference], w):
        page = row.pop("page")
        w.put(f"r/{row['key']}/run.js", f"run/{row['key']}", {"row": row, **page})
        rows.append(row)
    w.stores.close()
    reports = _reports(engine_roots, site, w)
    w.put("index.js", "index", {"runs": rows, "reports": reports})
    w.stats.runs = len(rows)
    return w.stats
