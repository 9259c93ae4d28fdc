"""The shell command of the Python running this process, for the commands trustsim prints (``next: ...``).

After ``make run`` the virtual environment is not active, so a printed ``python -m analysis ...`` would start
another Python without trustsim's packages. The printed command names the interpreter that ran the job.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys


def python_command(cwd: str | os.PathLike[str] | None = None) -> str:
    """How to start this interpreter from a shell in ``cwd`` (default: the working directory).

    ``python`` (or ``python3``) when that name on ``PATH`` is this interpreter (an active virtual
    environment); else its path relative to ``cwd`` when it lies below it (``.venv/bin/python``); else its
    absolute path. The path is not resolved through symlinks: a virtual environment's ``python`` is a link
    to the base interpreter, which lacks the environment's packages.
    """
    if not sys.executable:  # an embedded interpreter that does not know its own path
        return "python"
    exe = os.path.abspath(sys.executable)
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found and os.path.abspath(found) == exe:
            return name
    rel = os.path.relpath(exe, os.path.abspath(cwd if cwd is not None else os.getcwd()))
    if rel.split(os.sep, 1)[0] == os.pardir:
        return shlex.quote(exe)
    return shlex.quote(rel if os.sep in rel else os.path.join(os.curdir, rel))


def shell_path(path: str | os.PathLike[str]) -> str:
    """``path`` for a command line: relative to the working directory when it lies below it, quoted."""
    text = str(path)
    if os.path.isabs(text):
        rel = os.path.relpath(text, os.getcwd())
        if rel.split(os.sep, 1)[0] != os.pardir:
            text = rel
    return shlex.quote(text)


def report_folder(subcommand: str) -> str:
    """The ``--out`` folder trustsim suggests for an analysis subcommand: ``report/`` for the escape room's
    ``trust``, ``report/<subcommand>/`` for every other, so two families never share a folder."""
    return "report/" if subcommand == "trust" else f"report/{subcommand}/"


def analysis_command(subcommand: str, target: str | os.PathLike[str], out: str | None = None) -> str:
    """``<python> -m analysis <subcommand> <target> --out <out>`` (default :func:`report_folder`), runnable as
    printed in the working directory."""
    folder = out if out is not None else report_folder(subcommand)
    return f"{python_command()} -m analysis {subcommand} {shell_path(target)} --out {folder}"
