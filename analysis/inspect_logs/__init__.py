"""Inspect logs of trustsim's Inspect tasks (``trustsim_inspect``) read back as trustsim run directories.

Each sample of those tasks is one trustsim job; the sample keeps the job's run directory (manifest, events,
tables) in its store under :data:`RUN_FILES_KEY`, and shows each event in its transcript as an ``info`` event
of source :data:`EVENT_SOURCE`. ``python -m analysis from-inspect LOG... --out DIR`` writes those run
directories out (:mod:`analysis.inspect_logs.convert`), so every analysis, the viewer and the card read them.
Reading a log needs inspect-ai (the ``inspect`` extra); importing this package does not.
"""

from __future__ import annotations

RUN_FILES_KEY = "trustsim_run"
"""Where a sample keeps its job's run directory: ``{file name: text}`` (sample store; score metadata holds the
manifest and tables for the task's metrics)."""
EVENT_SOURCE = "trustsim"
"""The ``source`` of the transcript's ``info`` events that are the job's events."""
RUN_FILE_SUFFIXES = (".json", ".jsonl", ".csv")
"""The files of a run directory kept in a sample: the manifest, the events, the tables."""

__all__ = ["EVENT_SOURCE", "RUN_FILES_KEY", "RUN_FILE_SUFFIXES"]
