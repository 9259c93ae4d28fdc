"""Errors the entry point turns into clean messages (no traceback)."""

from __future__ import annotations

RESUME_HINT = "re-run the same command to resume: stored responses are replayed, not sent again"
"""The one advice for a run that stopped and can go on (every paid request is in the request store)."""


class TrustsimError(Exception):
    """Base class for errors reported to the user without a traceback."""


class ParameterError(ValueError):
    """An agent's parameter is out of range: raised by its constructor, so that building the agent from a
    config names the key (``agent.<parameter>``), not only the group.

    ``ParameterError("noise", "must be in [0, 1], got 2")`` reads ``noise must be in [0, 1], got 2``.
    """

    def __init__(self, parameter: str, problem: str) -> None:
        self.parameter = parameter
        super().__init__(f"{parameter} {problem}")


class ConfigError(TrustsimError):
    """A configuration value is missing, of the wrong type or out of range."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"config error at '{key}': {message}")
