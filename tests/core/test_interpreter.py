"""The printed commands name the interpreter that ran the job (trustsim/interpreter.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from trustsim.interpreter import analysis_command, python_command


def _python(folder: Path) -> Path:
    folder.mkdir(parents=True)
    exe = folder / "python"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with its own .venv/bin/python running this process; PATH does not reach it."""
    exe = _python(tmp_path / "repo" / ".venv" / "bin")
    monkeypatch.setattr(sys, "executable", str(exe))
    monkeypatch.setenv("PATH", str(_python(tmp_path / "elsewhere" / "bin").parent))
    return tmp_path / "repo"


def test_an_inactive_venv_below_the_working_directory_is_named_by_its_relative_path(
    venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert python_command(venv) == ".venv/bin/python"
    monkeypatch.chdir(venv)
    assert analysis_command("trust", venv / "outputs" / "runs") == (
        ".venv/bin/python -m analysis trust outputs/runs --out report/"
    )


def test_an_interpreter_outside_the_working_directory_is_named_by_its_absolute_path(
    venv: Path, tmp_path: Path
) -> None:
    assert python_command(tmp_path / "elsewhere") == str(venv / ".venv" / "bin" / "python")


def test_an_active_venv_is_plain_python(venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{venv / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert python_command(venv) == "python"


def test_an_interpreter_in_the_working_directory_itself_is_dotted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(_python(tmp_path / "here")))
    monkeypatch.setenv("PATH", "")
    assert python_command(tmp_path / "here") == "./python"


def test_paths_with_spaces_are_quoted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(_python(tmp_path / "my env" / "bin")))
    monkeypatch.setenv("PATH", "")
    assert python_command(tmp_path / "elsewhere") == f"'{tmp_path / 'my env' / 'bin' / 'python'}'"
