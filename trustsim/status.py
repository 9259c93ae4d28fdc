"""``python -m trustsim.status DIR...``: where the jobs under run or sweep directories stand.

One row per run directory (found by ``manifest.json``): status (``complete``, ``failed`` with its reason,
``running``, or ``stale``: a ``running`` manifest whose lock file is gone or whose process no longer exists on
this host), units of play done against planned, LLM calls sent and served from the store, tokens, cost and
wall time; totals per sweep (a directory holding ``jobs.csv`` or Hydra's ``multirun.yaml``) and overall.

Everything comes from ``manifest.json`` and ``events.jsonl``; no game package is imported. The job records its
unit of play in the manifest at start (``unit``: the end event, the ``counted`` name, ``per_end`` and the
``planned`` units). A run directory written before the manifest carried ``counted`` is shown without a plan:
its units are its end events, named by the unit's label (``3/? game``); one without ``unit`` shows no units.

Exit codes: 0, or 1 when any job failed; 2 when a path is missing or holds no run directory.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from trustsim.rundir import EVENTS, LOCK, EventUnit, RunDirError, find_run_dirs, read_manifest
from trustsim.rundir.lock import describe_holder, pid_alive

SWEEP_MARKERS = ("jobs.csv", "multirun.yaml")
LLM_KEYS = ("calls_sent", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd")
CLEAR = "\033[H\033[2J"


@dataclass
class JobStatus:
    """One run directory's standing."""

    path: str
    sweep: str | None
    run_id: str
    game: str
    status: str  # complete | failed | running | stale | damaged
    reason: str = ""
    unit: str = ""
    done: int = 0
    planned: int | None = None  # None: cannot be known from the manifest (and the job is not complete)
    llm: dict[str, Any] | None = None  # None: not recorded yet (written when the job ends)
    wall_s: float | None = None


@dataclass
class Totals:
    """Sums over a set of jobs; ``planned`` per unit is None when some job's plan is unknown."""

    jobs: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    done: dict[str, int] = field(default_factory=dict)
    planned: dict[str, int | None] = field(default_factory=dict)
    llm: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LLM_KEYS, 0))
    wall_s: float = 0.0

    def add(self, job: JobStatus) -> None:
        self.jobs += 1
        self.by_status[job.status] = self.by_status.get(job.status, 0) + 1
        if job.unit:
            self.done[job.unit] = self.done.get(job.unit, 0) + job.done
            prev = self.planned.get(job.unit, 0)
            self.planned[job.unit] = None if prev is None or job.planned is None else prev + job.planned
        for key in LLM_KEYS:
            self.llm[key] += (job.llm or {}).get(key) or 0
        self.wall_s += job.wall_s or 0.0


# -- reading one job ------------------------------------------------------------------------------------
def liveness(run_dir: Path, host: str | None = None) -> tuple[bool, str]:
    """Whether a ``running`` job is alive, and why not: its lock file is gone, or its process (on this host)
    no longer exists. A holder on another host cannot be checked from here and counts as alive."""
    path = run_dir / LOCK
    try:
        holder = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return False, "manifest says running but the lock file is gone (the job ended without finishing)"
    except (OSError, ValueError):
        return True, ""  # a lock being written right now, or unreadable: not proof that the job is gone
    if not isinstance(holder, dict):
        return True, ""
    pid, here = holder.get("pid"), host or socket.gethostname()
    if holder.get("host") == here and isinstance(pid, int) and not pid_alive(pid):
        return False, f"the job's process is gone ({describe_holder(holder)})"
    return True, ""


@dataclass(frozen=True)
class RecordedUnit:
    """A job's unit of play as its manifest records it (``unit``, written by the job at start)."""

    counted: str  # the manifest ``counts`` key, shown as the unit's name
    end: str  # the event type that ends one unit
    per_end: int  # counted units one end event completes
    planned: int | None  # None: unknown at start (or not recorded)


def recorded_unit(manifest: dict[str, Any]) -> RecordedUnit | None:
    """The unit of play the manifest records; None when it records none (a game without units, an old or
    damaged manifest). A manifest written before ``counted`` was recorded gives the unit's label, one unit
    per end event and no plan."""
    events = EventUnit.from_manifest(manifest)
    if events is None:
        return None
    data = manifest["unit"]
    counted = data.get("counted")
    if not isinstance(counted, str) or not counted:
        return RecordedUnit(events.label, events.end, 1, None)
    per_end = _int(data.get("per_end"))
    return RecordedUnit(counted, events.end, 1 if per_end is None else per_end, _int(data.get("planned")))


def _count_ends(run_dir: Path, end: str) -> int:
    """Units ended so far: the ``end`` events of ``events.jsonl``."""
    ended = 0
    needle = f'"type":"{end}"'.encode()
    try:
        with (run_dir / EVENTS).open("rb") as f:
            for line in f:
                if needle in line:
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue  # a line being written, or damage: not a finished unit
                    ended += isinstance(event, dict) and event.get("type") == end
    except OSError:
        pass
    return ended


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _game_of(manifest: dict[str, Any]) -> str:
    config = manifest.get("config")
    game = config.get("game") if isinstance(config, dict) else None
    return str(manifest.get("game") or (game.get("type") if isinstance(game, dict) else None) or "")


def _elapsed(started: Any, until: float) -> float | None:
    try:
        return round(until - datetime.fromisoformat(str(started)).timestamp(), 3)
    except ValueError:
        return None


def job_status(run_dir: Path, sweep: Path | None = None, host: str | None = None) -> JobStatus:
    """Read one run directory (never raises on damage: a bad manifest gives status ``damaged``)."""
    where = str(sweep) if sweep is not None else None
    try:
        manifest = read_manifest(run_dir)
    except RunDirError as exc:
        return JobStatus(str(run_dir), where, run_dir.name, "", "damaged", str(exc))
    game = _game_of(manifest)
    status = str(manifest.get("status") or "unknown")
    failure = manifest.get("failure")
    reason = str(failure.get("reason") or "") if isinstance(failure, dict) else str(failure or "")
    play = recorded_unit(manifest)
    timings = _mapping(manifest.get("timings"))
    counts = _mapping(manifest.get("counts"))
    job = JobStatus(str(run_dir), where, str(manifest.get("run_id") or run_dir.name), game, status, reason)
    if play is not None:
        job.unit = play.counted
        if status in ("complete", "failed") and play.counted in counts:
            job.done = _int(counts.get(play.counted)) or 0
        else:
            job.done = _count_ends(run_dir, play.end) * play.per_end
        job.planned = play.planned
        if status == "complete" and job.planned is None:
            job.planned = job.done  # a complete job played everything it planned
    llm = manifest.get("llm")
    if status in ("complete", "failed") and isinstance(llm, dict):
        job.llm = {k: llm.get(k, 0) for k in LLM_KEYS}
    if status == "running":
        alive, why = liveness(run_dir, host)
        if not alive:
            job.status, job.reason = "stale", why + "; re-run the job's command to resume it"
            last = max(
                (p.stat().st_mtime for p in (run_dir / EVENTS, run_dir / "manifest.json") if p.exists()),
                default=time.time(),
            )
            job.wall_s = _elapsed(timings.get("started"), last)
        else:
            job.wall_s = _elapsed(timings.get("started"), time.time())
    else:
        wall = timings.get("wall_s")
        job.wall_s = float(wall) if isinstance(wall, (int, float)) else None
    return job


def _sweep_of(run_dir: Path, roots: Sequence[Path]) -> Path | None:
    """The nearest directory above ``run_dir`` (within the given roots' parents) that is a sweep."""
    stop = {r.resolve().parent for r in roots}
    for parent in run_dir.resolve().parents:
        if any((parent / marker).is_file() for marker in SWEEP_MARKERS):
            return parent
        if parent in stop:
            return None
    return None


def collect(paths: Iterable[str | os.PathLike[str]]) -> list[JobStatus]:
    """Every job under the given run or sweep directories (each directory once).

    Raises:
        RunDirError: When a path is missing, not a directory, or holds no run directory.
    """
    roots = [Path(p) for p in paths]
    jobs: list[JobStatus] = []
    seen: set[Path] = set()
    host = socket.gethostname()
    for root in roots:
        found = find_run_dirs(root)
        if not found:
            raise RunDirError(f"{root}: no run directories (no manifest.json) under it")
        for run_dir in found:
            if run_dir.resolve() in seen:
                continue
            seen.add(run_dir.resolve())
            jobs.append(job_status(run_dir, _sweep_of(run_dir, roots), host))
    return jobs


def summarize(jobs: Sequence[JobStatus]) -> dict[str, Any]:
    """The machine-readable report: jobs, totals per sweep and overall."""
    sweeps: dict[str, Totals] = {}
    overall = Totals()
    for job in jobs:
        if job.sweep is not None:
            sweeps.setdefault(job.sweep, Totals()).add(job)
        overall.add(job)
    return {
        "jobs": [asdict(j) for j in jobs],
        "sweeps": {k: asdict(v) for k, v in sweeps.items()},
        "totals": asdict(overall),
        "failed": overall.by_status.get("failed", 0),
    }


# -- rendering ------------------------------------------------------------------------------------------
def _units(done: int, planned: int | None, unit: str) -> str:
    return f"{done}/{'?' if planned is None else planned} {unit}" if unit else "-"


def _wall(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _money(cost: float) -> str:
    return f"${cost:.4f}"


def _totals_line(label: str, t: Totals) -> str:
    states = ", ".join(f"{n} {s}" for s, n in sorted(t.by_status.items()))
    units = ", ".join(_units(d, t.planned.get(u), u) for u, d in sorted(t.done.items())) or "-"
    llm = t.llm
    return (
        f"{label}: {t.jobs} job(s) ({states}); {units}; LLM calls sent {int(llm['calls_sent'])}, "
        f"cached {int(llm['cache_hits'])}, tokens {int(llm['prompt_tokens'])}+{int(llm['completion_tokens'])}, "
        f"cost {_money(llm['cost_usd'])}; wall (sum) {_wall(t.wall_s)}"
    )


def render(jobs: Sequence[JobStatus]) -> str:
    """The human-readable table, the reasons of failed/stale/damaged jobs, and the totals."""
    header = ("JOB", "GAME", "STATUS", "DONE/PLANNED", "SENT", "CACHED", "TOKENS", "COST", "WALL")
    rows = []
    for j in jobs:
        path = Path(j.path).resolve()
        sweep = Path(j.sweep) if j.sweep is not None else None
        name = (
            f"{sweep.name}/{path.relative_to(sweep).as_posix()}"
            if sweep is not None and path.is_relative_to(sweep)
            else j.path
        )
        llm = j.llm
        rows.append(
            (
                name,
                j.game or "-",
                j.status,
                _units(j.done, j.planned, j.unit),
                str(llm["calls_sent"]) if llm else "-",
                str(llm["cache_hits"]) if llm else "-",
                f"{llm['prompt_tokens']}+{llm['completion_tokens']}" if llm else "-",
                _money(llm["cost_usd"] or 0.0) if llm else "-",
                _wall(j.wall_s),
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    notes = [f"  {r[0]}: {j.status}: {j.reason}" for r, j in zip(rows, jobs, strict=True) if j.reason]
    if notes:
        lines += ["", *notes]
    summary = summarize(jobs)
    lines.append("")
    for sweep, totals in summary["sweeps"].items():
        lines.append(_totals_line(f"sweep {sweep}", Totals(**totals)))
    lines.append(_totals_line("total", Totals(**summary["totals"])))
    if any(j.status == "running" for j in jobs):
        lines.append("(LLM figures of running jobs are recorded when they end; their wall time is so far)")
    return "\n".join(lines)


# -- command --------------------------------------------------------------------------------------------
def _report(paths: Sequence[str], as_json: bool) -> int:
    jobs = collect(paths)
    for j in jobs:
        if j.status == "damaged":
            print(f"warning: {j.reason}; listed as damaged", file=sys.stderr)
    if as_json:
        print(json.dumps(summarize(jobs), indent=2, sort_keys=False))
    else:
        print(render(jobs))
    return 1 if any(j.status == "failed" for j in jobs) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trustsim.status",
        description="Status of the jobs under run or sweep directories (exit 1 if any job failed).",
    )
    parser.add_argument("paths", nargs="+", metavar="DIR", help="run or sweep directories")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--watch", nargs="?", type=float, const=10.0, metavar="SECONDS", help="refresh every SECONDS (10)"
    )
    args = parser.parse_args(argv)
    if args.watch is not None and args.watch <= 0:
        parser.error("--watch needs a positive number of seconds")
    code = 0
    try:
        if args.watch is None:
            return _report(args.paths, args.json)
        while True:
            if sys.stdout.isatty():
                sys.stdout.write(CLEAR)
            code = _report(args.paths, args.json)
            sys.stdout.flush()
            time.sleep(args.watch)
    except RunDirError as exc:
        print(f"trustsim.status: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return code


if __name__ == "__main__":
    sys.exit(main())
