"""The command line of a preview: recognising ``preview=true`` and where its output goes (imported by the
entry point before Hydra runs, so it imports nothing heavy)."""

from __future__ import annotations

from collections.abc import Sequence

PREVIEW_ROOT = "outputs/previews"


def preview_requested(argv: Sequence[str]) -> bool:
    """Whether the command line asks for a preview (``preview=true``)."""
    for arg in argv:
        key, _, value = arg.partition("=")
        if key.lstrip("+") == "preview" and value.strip().lower() in ("true", "yes", "1", "on"):
            return True
    return False


def preview_argv(argv: list[str]) -> list[str]:
    """A preview's output goes under ``outputs/previews/`` (Hydra's saved config and ``preview.json``),
    never under the run or sweep directories, unless the command line names the directory."""
    out = list(argv)
    stamp = "${now:%Y-%m-%d}/${now:%H-%M-%S-%f}"
    if not any(a.lstrip("+").startswith("hydra.run.dir=") for a in argv):
        out.append(f"hydra.run.dir={PREVIEW_ROOT}/{stamp}_${{name}}")
    if not any(a.lstrip("+").startswith("hydra.sweep.dir=") for a in argv):
        out.append(f"hydra.sweep.dir={PREVIEW_ROOT}/{stamp}")
    return out
