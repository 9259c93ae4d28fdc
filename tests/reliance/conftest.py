"""Shared fixtures: the repository's library, built once per test session."""

from __future__ import annotations

import pytest

from games.reliance.library import default_library


@pytest.fixture(scope="session")
def lib():
    return default_library()
