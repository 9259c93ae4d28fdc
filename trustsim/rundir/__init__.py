"""The run directory: the contract between the engine, the games, ``trustsim.extract`` and ``analysis``.

One module for everything a run directory holds (see ``docs/run_directory.md``): file names and column
schemas (:mod:`.schema`), the event and table writers (:mod:`.writer`), the manifest (:mod:`.manifest`),
the lock and the folders a job refuses (:mod:`.lock`, :mod:`.directory`, :mod:`.foreign`) and the reader with its damage and duplicate rules
(:mod:`.reader`). It imports nothing else from the engine (no mesa, hydra, litellm or game), so ``analysis``
may import it; a game's event unit comes from the run's own manifest, never from the game registry.
"""

from trustsim.rundir.directory import clear_previous_run, open_run_dir
from trustsim.rundir.foreign import RunDirForeign, check_run_dir, check_sweep_dir, foreign_files
from trustsim.rundir.lock import BUSY_EXIT_CODE, RunDirBusy, RunDirLock, claim_from_argv
from trustsim.rundir.manifest import Manifest, failure_from_exception, one_line, write_failed_manifest
from trustsim.rundir.reader import (
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
from trustsim.rundir.schema import (
    EVENT_ENVELOPE,
    EVENTS,
    LOCK,
    MANIFEST,
    PREDICTION_KEYS,
    PREDICTION_MEASURES,
    EventUnit,
    TableSchema,
    prediction_schema,
)
from trustsim.rundir.writer import (
    RunRecorder,
    TableWriter,
    format_cell,
    json_default,
    write_json_atomic,
    write_table,
)

__all__ = [
    "BUSY_EXIT_CODE",
    "EVENTS",
    "EVENT_ENVELOPE",
    "LOCK",
    "MANIFEST",
    "PREDICTION_KEYS",
    "PREDICTION_MEASURES",
    "DataWarning",
    "Discovery",
    "EventScan",
    "EventUnit",
    "Manifest",
    "Run",
    "RunDirBusy",
    "RunDirError",
    "RunDirForeign",
    "RunDirLock",
    "RunRecorder",
    "TableSchema",
    "TableWriter",
    "check_run_dir",
    "check_sweep_dir",
    "claim_from_argv",
    "clear_previous_run",
    "discover_runs",
    "failure_from_exception",
    "find_run_dirs",
    "foreign_files",
    "format_cell",
    "iter_events",
    "json_default",
    "one_line",
    "open_run_dir",
    "prediction_schema",
    "print_data_warnings",
    "read_events",
    "read_manifest",
    "read_table",
    "read_tables",
    "scan_events",
    "usable_rows",
    "write_failed_manifest",
    "write_json_atomic",
    "write_table",
]
