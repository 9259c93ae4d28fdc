"""Provenance: package versions and the git revision of the code that ran.

Both are read once per process (the code a process runs is the code it imported): a sweep of many jobs in
one process (``hydra/launcher=trustsim``) does not scan the installed packages or run ``git`` for every job."""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("trustsim", "mesa", "hydra-core", "omegaconf", "litellm", "numpy", "pandas", "llama-cpp-python")


def package_versions() -> dict[str, str]:
    """Python's and the key packages' versions (a fresh dict; read once per process)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_revision(root: Path | None = None) -> dict[str, object]:
    """The revision of the code's git checkout and whether it has changes (a fresh dict; read once per process
    and root)."""
    return dict(_git_revision(root or Path(__file__).resolve().parent.parent))


@functools.cache
def _git_revision(root: Path) -> dict[str, object]:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=5,
                check=True,
            ).stdout.strip()
        )
        return {"revision": rev, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"revision": None, "dirty": None}
