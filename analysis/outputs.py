"""How every analysis writes what it found: each table as CSV and Markdown, each figure as PNG and PDF.

docs/running.md (Analysis) promises both forms for every subcommand; the subcommands write through these two
functions so none forgets one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.text import md_table


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no external dependency); missing values read ``—``."""
    if df.empty:
        return "_(no rows)_\n"
    cols = [str(c) for c in df.columns]

    def cell(v: object) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return "—"
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    return md_table(cols, ([cell(v) for v in row] for row in df.itertuples(index=False))) + "\n"


def write_table(
    out_dir: Path, name: str, csv_frame: pd.DataFrame, md_frame: pd.DataFrame | None = None, **csv: Any
) -> str:
    """Write ``name.csv`` (``csv``: extra ``to_csv`` arguments) and ``name.md`` (``md_frame`` when the
    Markdown shows a formatted view); returns the Markdown text."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_frame.to_csv(out_dir / f"{name}.csv", **{"index": False, "na_rep": "", **csv})
    text = markdown_table(md_frame if md_frame is not None else csv_frame)
    (out_dir / f"{name}.md").write_text(text, encoding="utf-8")
    return text


def save_figure(fig: Any, png: Path, *, dpi: int = 120, **savefig: Any) -> Path:
    """Save a matplotlib figure as ``png`` and the same name with ``.pdf``, then close it; returns ``png``."""
    import matplotlib.pyplot as plt

    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=dpi, **savefig)
    fig.savefig(png.with_suffix(".pdf"), **savefig)
    plt.close(fig)
    return png
