"""Write extractions as a run directory that ``python -m analysis calibration`` reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trustsim.extract.extractor import Extraction
from trustsim.rundir import Manifest, TableSchema, prediction_schema, write_table
from trustsim.seeding import stable_hash

EXTRACTIONS = TableSchema("extractions", ("run_id", "cluster", "game", "round", "item", "p", "reason", "raw"))


def prediction_row(ex: Extraction, source: str) -> dict[str, Any]:
    """The predictions.csv row of one extraction (``p`` empty when the extractor gave none)."""
    return {**ex.item.row, "p": ex.p, "outcome": ex.item.outcome, "p_exact": None, "source": source}


def write_outputs(
    out: Path,
    extractions: Sequence[Extraction],
    *,
    source: str,
    game_type: str,
    prediction_columns: Sequence[str],
    extractor_model: str,
    sources: Sequence[str],
    status: str = "complete",
    llm_stats: dict | None = None,
) -> None:
    """predictions.csv (with ``prediction_columns``: the source game's), extractions.csv (raw answers and
    reasons) and manifest.json in ``out``.

    Row ``run_id`` values are the *source* runs (so resampling clusters stay per source run and match). The
    manifest's ``config_hash`` is the hash of what the extraction read and found (extractor, sources, each
    item and its probability), so the analysis recognises a copy of the folder as the same run.
    """
    out.mkdir(parents=True, exist_ok=True)
    predictions = prediction_schema()
    tables = {
        predictions.name: write_table(
            out / predictions.file, prediction_columns, [prediction_row(e, source) for e in extractions]
        ),
        EXTRACTIONS.name: write_table(
            out / EXTRACTIONS.file,
            EXTRACTIONS.columns,
            [
                {k: e.item.row.get(k) for k in ("run_id", "cluster", "game", "round", "item")}
                | {"p": e.p, "reason": e.reason, "raw": e.raw}
                for e in extractions
            ],
        ),
    }
    n_p = sum(e.p is not None for e in extractions)
    identity = {
        "extractor": extractor_model,
        "source": source,
        "game": game_type,
        "sources": list(sources),
        "items": [[e.item.row.get(k) for k in EXTRACTIONS.columns[:5]] + [e.p] for e in extractions],
    }
    manifest = Manifest(
        out,
        run_id=f"extract-{out.name}",
        config_hash=stable_hash(identity),
        game=game_type,
        experiment="extract",
        sources=list(sources),
        events=False,  # an extraction has no event log
    )
    manifest.finish(
        status,
        cell={"model": extractor_model, "source": source},
        counts={"items": len(extractions), "with_probability": n_p, "missing": len(extractions) - n_p},
        llm=llm_stats or {},
        tables=tables,
    )
