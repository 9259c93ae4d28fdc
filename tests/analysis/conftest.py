"""Shared fixtures for the analysis tests."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # plain `pytest` without an installed package
    sys.path.insert(0, str(REPO_ROOT))
