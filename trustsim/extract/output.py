"""Write extractions as a run directory that ``python -m analysis calibration`` reads."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trustsim import __version__
from trustsim.extract.extractor import Extraction
from trustsim.records import format_cell, write_json_atomic

PREDICTION_COLUMNS = [
    "run_id", "game_type", "cluster", "model", "agent", "memory", "schedule", "subject", "subject_kind",
    "game", "round", "p", "outcome", "p_exact", "source", "item",
]  # fmt: skip
EXTRACTION_COLUMNS = ["run_id", "cluster", "game", "round", "item", "p", "reason", "raw"]


def prediction_row(ex: Extraction, source: str) -> dict[str, Any]:
    """The predictions.csv row of one extraction (``p`` empty when the extractor gave none)."""
    return {**ex.item.row, "p": ex.p, "outcome": ex.item.outcome, "p_exact": None, "source": source}


def write_outputs(
    out: Path,
    extractions: Sequence[Extraction],
    *,
    source: str,
    game_type: str,
    extractor_model: str,
    sources: Sequence[str],
    status: str = "complete",
    llm_stats: dict | None = None,
) -> None:
    """predictions.csv, extractions.csv (raw answers and reasons) and manifest.json in ``out``.

    Row ``run_id`` values are the *source* runs (so resampling clusters stay per source run and match).
    """
    out.mkdir(parents=True, exist_ok=True)
    for name, cols, rows in (
        ("predictions.csv", PREDICTION_COLUMNS, [prediction_row(e, source) for e in extractions]),
        (
            "extractions.csv",
            EXTRACTION_COLUMNS,
            [
                {**{k: e.item.row.get(k) for k in ("run_id", "cluster", "game", "round", "item")}}
                | {"p": e.p, "reason": e.reason, "raw": e.raw}
                for e in extractions
            ],
        ),
    ):
        with (out / name).open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(cols)
            w.writerows([[format_cell(r.get(c)) for c in cols] for r in rows])
    n_p = sum(e.p is not None for e in extractions)
    write_json_atomic(
        out / "manifest.json",
        {
            "trustsim_version": __version__,
            "run_id": f"extract-{out.name}",
            "game": game_type,
            "status": status,
            "failure": None,
            "cell": {"model": extractor_model, "source": source},
            "experiment": "extract",
            "sources": list(sources),
            "timings": {"finished": datetime.now(UTC).isoformat(timespec="seconds")},
            "counts": {"items": len(extractions), "with_probability": n_p, "missing": len(extractions) - n_p},
            "llm": llm_stats or {},
        },
    )
