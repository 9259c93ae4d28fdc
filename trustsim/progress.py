"""Progress bars: tqdm on an interactive terminal, silent in CI or when disabled."""

from __future__ import annotations

import os
import sys
from typing import Any

from tqdm import tqdm


def progress_enabled(setting: Any) -> bool:
    if setting in (True, "true"):
        return True
    if setting in (False, "false"):
        return False
    return sys.stderr.isatty() and not os.environ.get("CI")


def make_progress(total: int, desc: str, setting: Any = "auto") -> tqdm:
    return tqdm(
        total=total, desc=desc, disable=not progress_enabled(setting), leave=False, dynamic_ncols=True
    )
