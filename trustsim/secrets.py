"""Keep secrets out of everything a run writes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REDACTED = "***redacted***"
_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|passw(or)?d|authorization|bearer)", re.IGNORECASE)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_MIN_SECRET_LEN = 8


def secret_values() -> list[str]:
    """Values of environment variables whose names look like credentials (long enough to be real)."""
    return sorted(
        {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET_LEN},
        key=len,
        reverse=True,
    )


def redact_text(text: str, secrets: Iterable[str] | None = None) -> str:
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact(obj: Any, secrets: list[str] | None = None) -> Any:
    """Copy of a config-like structure with secret-named keys and secret env values redacted.

    Keys that name an environment variable (``*_env``) are kept: they hold a name, not a secret.
    """
    secrets = secret_values() if secrets is None else secrets
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            name = str(key)
            if _SECRET_KEY.search(name) and not name.endswith("_env") and isinstance(value, str) and value:
                out[key] = REDACTED
            else:
                out[key] = redact(value, secrets)
        return out
    if isinstance(obj, list | tuple):
        return [redact(v, secrets) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj, secrets)
    return obj


_ASSIGNMENT = re.compile(
    r"(?P<key>[\w.]*(api[_-]?key|secret|token|passw(?:or)?d)(?!_env)\w*)(?P<sep>\s*[:=]\s*)(?P<value>[^\s,}\]]+)",
    re.IGNORECASE,
)


def redact_assignments(text: str) -> str:
    """Redact ``api_key: value`` / ``model.api_key=value`` assignments (YAML or Hydra overrides)."""
    return _ASSIGNMENT.sub(lambda m: f"{m['key']}{m['sep']}{REDACTED}", text)


def scrub_files(paths: Iterable[Path]) -> None:
    """Rewrite files in place with secrets removed (e.g. Hydra's saved config and overrides)."""
    secrets = secret_values()
    for path in paths:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            clean = redact_assignments(redact_text(text, secrets))
            if clean != text:
                path.write_text(clean, encoding="utf-8")
