"""Run directories as ``analysis`` sees them: the one reader of :mod:`trustsim.rundir`, re-exported.

``analysis`` imports nothing else from the engine (the weak-model rule of :mod:`trustsim.rundir.weak` is
part of reading a run). Discovery, manifests, events and tables, the damage rule
and the duplicate rule are documented in ``docs/run_directory.md``.
"""

from __future__ import annotations

from trustsim.rundir import (
    EVENTS,
    MANIFEST,
    DataWarning,
    Discovery,
    EventScan,
    Run,
    RunDirError,
    discover_runs,
    find_run_dirs,
    iter_events,
    print_data_warnings,
    read_events,
    read_manifest,
    read_table,
    read_tables,
    scan_events,
    usable_rows,
)
from trustsim.rundir.weak import WEAK_INVALID_SHARE, describe_weak, flagged_weak, weak_reason

__all__ = [
    "EVENTS",
    "MANIFEST",
    "WEAK_INVALID_SHARE",
    "DataWarning",
    "Discovery",
    "EventScan",
    "Run",
    "RunDirError",
    "describe_weak",
    "discover_runs",
    "find_run_dirs",
    "flagged_weak",
    "iter_events",
    "print_data_warnings",
    "read_events",
    "read_manifest",
    "read_table",
    "read_tables",
    "scan_events",
    "usable_rows",
    "weak_reason",
]
