"""Hydra hooks of the entry point: job directory names in a sweep, the sweep's job index, failed jobs.

A multirun writes under ONE sweep directory (``outputs/sweeps/<date>/<time>/``) with one subdirectory per
job named by its number and overrides (``003_+experiment=2strike,seed=1``), and, at the end, ``jobs.csv``
(number, directory, overrides, status, run id, failure). If any job failed, the command prints which and
exits 1 (130 when the sweep was interrupted: Ctrl-C). An output directory that cannot be created, or that
a run must not write into (the working directory, ``/``, a folder holding files no trustsim run wrote:
:mod:`trustsim.rundir.foreign`), stops the command at once with exit code 2, before anything is written
there.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from trustsim.preview import sweep_total
from trustsim.rundir.foreign import RunDirForeign, check_run_dir, check_sweep_dir
from trustsim.summary import sweep_next_lines

MAX_DIRNAME = 100
JOBS_FILE = "jobs.csv"


def job_dirname(overrides: str, num: Any) -> str:
    """``<num>_<overrides>`` made safe as one path component (no ``/``, bounded length)."""
    clean = re.sub(r"[^A-Za-z0-9_.,=+\-\[\]()]", "_", str(overrides)).strip("._") or "job"
    if len(clean) > MAX_DIRNAME:
        clean = clean[:MAX_DIRNAME]
    return f"{int(num):03d}_{clean}"


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("trustsim_job_dirname"):
        OmegaConf.register_new_resolver("trustsim_job_dirname", job_dirname)


def _writable(path: Path, key: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".trustsim-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        exit_unwritable(path, exc, key)


def exit_unwritable(path: Path | str, exc: OSError, key: str = "hydra.run.dir") -> None:
    """Say which output directory cannot be written and what to do, then exit 2 (no traceback)."""
    reason = exc.strerror or type(exc).__name__
    print(
        f"trustsim: cannot write the output directory '{path}' ({reason}); "
        f"choose a writable location, e.g. {key}=outputs/runs/my-run",
        file=sys.stderr,
    )
    sys.exit(2)


def _refuse_foreign(check: Any, folder: str) -> None:
    """Run ``check`` on ``folder``; a refusal is printed, exit 2 (nothing was written there)."""
    try:
        check(folder)
    except RunDirForeign as exc:
        print(f"trustsim: {exc}", file=sys.stderr)
        sys.exit(2)


def read_jobs(sweep_dir: Path) -> list[dict[str, Any]]:
    """One row per job directory of a sweep: number, directory, overrides, status, run id, failure."""
    rows = []
    for job_dir in sorted(p for p in sweep_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        manifest_path = job_dir / "manifest.json"
        overrides_path = job_dir / ".hydra" / "overrides.yaml"
        if not manifest_path.exists() and not overrides_path.exists():
            continue
        manifest: dict[str, Any] = {}
        if manifest_path.exists():
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                manifest = {"status": "unreadable"}
        overrides = ""
        if overrides_path.exists():
            overrides = " ".join(yaml.safe_load(overrides_path.read_text()) or [])
        failure = manifest.get("failure") or {}
        num = job_dir.name.split("_", 1)[0]
        rows.append(
            {
                "job": int(num) if num.isdigit() else num,
                "dir": job_dir.name,
                "overrides": overrides,
                "status": manifest.get("status", "missing"),
                "run_id": manifest.get("run_id"),
                "failure": failure.get("reason") if isinstance(failure, dict) else failure,
            }
        )
    return rows


class SweepReport(Callback):
    """Checks output directories before anything runs; indexes a sweep's jobs and reports failures."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _refuse_foreign(check_run_dir, str(config.hydra.run.dir))
        _writable(Path(str(config.hydra.run.dir)), "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _refuse_foreign(check_sweep_dir, str(config.hydra.sweep.dir))
        _writable(Path(str(config.hydra.sweep.dir)), "hydra.sweep.dir")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if not sweep_dir.is_dir():
            return
        if config.get("preview") is True:  # a previewed sweep: the total of its jobs' estimates
            if sweep_total(sweep_dir):
                sys.exit(1)
            return
        rows = read_jobs(sweep_dir)
        with (sweep_dir / JOBS_FILE).open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=["job", "dir", "overrides", "status", "run_id", "failure"])
            writer.writeheader()
            writer.writerows(rows)
        failed = [r for r in rows if r["status"] != "complete"]
        if not failed:
            print(f"trustsim: sweep complete: {len(rows)} jobs -> {sweep_dir} (index: {JOBS_FILE})")
            battery = OmegaConf.select(config, "card") is not None
            for line in sweep_next_lines(sweep_dir, (sweep_dir / r["dir"] for r in rows), battery=battery):
                print(line)
            return
        print(f"trustsim: {len(failed)} of {len(rows)} jobs did not complete:", file=sys.stderr)
        for r in failed:
            print(
                f"  job {r['job']} [{r['overrides']}]: {r['status']}: {r['failure'] or '?'}", file=sys.stderr
            )
        print(f"trustsim: index: {sweep_dir / JOBS_FILE}", file=sys.stderr)
        sys.exit(130 if any(r["failure"] == "interrupted" for r in failed) else 1)
