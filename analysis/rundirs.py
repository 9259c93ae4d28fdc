"""Run directories as ``analysis`` sees them: the one reader of :mod:`trustsim.rundir`, re-exported.

``analysis`` imports nothing else from the engine. Discovery, manifests, events and tables, the damage rule
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

__all__ = [
    "EVENTS",
    "MANIFEST",
    "DataWarning",
    "Discovery",
    "EventScan",
    "Run",
    "RunDirError",
    "discover_runs",
    "find_run_dirs",
    "iter_events",
    "print_data_warnings",
    "read_events",
    "read_manifest",
    "read_table",
    "read_tables",
    "scan_events",
    "usable_rows",
]
