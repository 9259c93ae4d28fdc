"""Tests of the python -m analysis entry point."""

from __future__ import annotations

import sys
import types

import pytest

from analysis import __main__ as entry


def test_missing_subpackage_is_skipped_but_inner_errors_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("analysis.zzbroken.cli")
    monkeypatch.setattr(entry, "SUBCOMMAND_MODULES", ("analysis.zzmissing.cli",))
    assert entry._load_cli_modules() == []

    def fake_import(name: str) -> types.ModuleType:
        raise ModuleNotFoundError("No module named 'somedep'", name="somedep")

    monkeypatch.setattr(entry, "SUBCOMMAND_MODULES", ("analysis.zzbroken.cli",))
    monkeypatch.setattr(entry.importlib, "import_module", fake_import)
    with pytest.raises(ModuleNotFoundError, match="somedep"):
        entry._load_cli_modules()
    del broken


def test_no_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert entry.main([]) == 2
    assert "SUBCOMMAND" in capsys.readouterr().out
    assert "analysis" in sys.modules
