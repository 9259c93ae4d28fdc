"""Shared fixtures of the plan tests: the shipped reference logs, unpacked once."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.reference_data import extract_reference


@pytest.fixture(scope="session")
def reference_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_reference(tmp_path_factory.mktemp("reference"))
