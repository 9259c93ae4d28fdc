"""Deprecated: moved to :mod:`trustsim.rundir` (kept only until every importer has moved)."""

from trustsim.rundir.writer import RunRecorder, TableWriter, format_cell, write_json_atomic

__all__ = ["RunRecorder", "TableWriter", "format_cell", "write_json_atomic"]
