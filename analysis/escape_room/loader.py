"""Load any mix of run directories, sweep directories and reference-study logs into tidy tables."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.escape_room.reference import import_reference_run
from analysis.escape_room.schema import (
    AGENT_GAME_COLUMNS,
    CELL_KEYS,
    DECISION_COLUMNS,
    GAME_COLUMNS,
    RUN_COLUMNS,
)
from analysis.rundirs import (
    DataWarning,
    Run,
    RunDirError,
    discover_runs,
    find_run_dirs,
    flagged_weak,
    read_table,
    usable_rows,
    weak_reason,
)
from trustsim.rundir.reference_logs import ReferenceLogError, find_reference_runs

log = logging.getLogger(__name__)

_TABLES = {
    "decisions": ("decisions.csv", DECISION_COLUMNS),
    "games": ("games.csv", GAME_COLUMNS),
    "agent_games": ("agent_games.csv", AGENT_GAME_COLUMNS),
}
_OPTIONAL = {
    "source", "seed", "partner_slot", "agent", "prompt", "team", "invalid_reason", "target", "escape_round",
}  # fmt: skip
_BOOL_COLUMNS = ("is_partner", "d_correct", "valid", "verify_partner", "escaped", "survived")
_RUN_SPECIFIC = {"seed", "seeds", "runs", "hydra", "output_dir", "run_dir", "store", "store_path", "progress"}


@dataclass
class TrustData:
    """Tidy escape-room tables of every loaded run, plus what was set aside and why."""

    decisions: pd.DataFrame
    games: pd.DataFrame
    agent_games: pd.DataFrame
    runs: pd.DataFrame
    excluded: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def n_games(self) -> int:
        """Number of games loaded."""
        return len(self.games)


def _config_key(manifest: dict[str, Any]) -> str:
    def clean(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: clean(v) for k, v in obj.items() if str(k) not in _RUN_SPECIFIC}
        if isinstance(obj, list):
            return [clean(v) for v in obj]
        return obj

    body = clean(manifest.get("config") or {})
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _check_columns(df: pd.DataFrame, run: Run, name: str, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in df.columns and c not in _OPTIONAL]
    if missing:
        raise RunDirError(f"{run.path / name}: missing column(s) {', '.join(missing)}")


def _run_cell(run: Run, games: pd.DataFrame) -> dict[str, str]:
    """The run's cell keys: the manifest's ``cell``, completed from ``games.csv``; a conflict is warned."""
    cell: dict[str, str] = {}
    for key in CELL_KEYS:
        in_table = sorted(games[key].dropna().astype(str).unique()) if key in games.columns else []
        declared = run.cell.get(key)
        if declared is not None and in_table and in_table != [str(declared)]:
            warnings.warn(
                f"{run.path / 'games.csv'}: {key} is {in_table} but the manifest cell says {declared!r}; "
                "using the manifest",
                DataWarning,
                stacklevel=3,
            )
        if declared is not None:
            cell[key] = str(declared)
        elif len(in_table) == 1:
            cell[key] = in_table[0]
        elif len(in_table) > 1:
            raise RunDirError(f"{run.path / 'games.csv'}: one run holds several {key} values {in_table}")
        else:
            cell[key] = "fixed" if key == "partner_slot" else ""
    return cell


def _load_contract_run(run: Run, *, full_check: bool) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    frames: dict[str, pd.DataFrame] = {}
    for key, (name, columns) in _TABLES.items():
        df = read_table(run, name, cell_keys=False, usecols=set(columns) | {"agent", "model"})
        if df is None:
            raise RunDirError(f"{run.path / name}: missing (not an escape-room run, or it wrote no game yet)")
        _check_columns(df, run, name, columns)
        frames[key] = df
    if frames["games"].empty:
        raise RunDirError(f"{run.path / 'games.csv'}: no games (the run wrote none)")
    cell = _run_cell(run, frames["games"])
    for key, df in frames.items():
        if key != "games":  # per-seat agent/model (the partner is scripted): keep them under seat_*
            df = df.rename(columns={c: f"seat_{c}" for c in ("agent", "model") if c in df.columns})
        df = df.assign(source="trustsim", **cell)
        if "run_id" not in df.columns:
            df["run_id"] = run.run_id
        frames[key] = df
    games = usable_rows(run, "games", frames["games"], full=full_check)  # the damage rule (one warning)
    if games.empty:
        raise RunDirError(f"{run.path / 'events.jsonl'}: no game with intact events (see the warning)")
    if len(games) != len(frames["games"]):
        keep = set(zip(games["session"].astype(int), games["game"].astype(int), strict=True))
        for key, df in frames.items():
            pairs = zip(df["session"].astype(int), df["game"].astype(int), strict=True)
            frames[key] = df[[p in keep for p in pairs]]
    return frames, cell


def _finalise(frames: list[pd.DataFrame], columns: tuple[str, ...]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    df = pd.concat(frames, ignore_index=True)
    for col in columns:
        if col not in df.columns:
            df[col] = pd.NA
    extra = [c for c in df.columns if c not in columns]
    df = df[[*columns, *extra]]
    for col in _BOOL_COLUMNS:
        if col in df.columns:
            df[col] = _to_bool_series(df[col])
    for col in CELL_KEYS:
        df[col] = df[col].fillna("").astype(str)
    return df


def _to_bool_series(col: pd.Series) -> pd.Series:
    """Vectorised ``true``/``false`` (any case), 1/0 and real booleans to bool; missing -> False."""
    if col.dtype == bool:
        return col
    text = col.astype("string").str.strip().str.lower()
    return text.isin(["true", "1", "1.0", "yes"]).fillna(False).astype(bool)


def _weak_columns(manifest: dict[str, Any], decisions: pd.DataFrame) -> dict[str, Any]:
    """The run summary's weak-model label of one run: answers of the seats under test a model played."""
    if decisions.empty:
        answers = invalid = 0
    else:
        under_test = ~_to_bool_series(decisions["is_partner"])
        model = decisions.get("seat_model", decisions.get("model"))
        if model is not None:
            under_test &= ~model.fillna("").astype(str).str.lower().isin(["", "scripted"])
        answers = int(under_test.sum())
        invalid = int((under_test & ~_to_bool_series(decisions["valid"])).sum())
    flagged = flagged_weak(manifest)
    return {
        "answers": answers,
        "invalid_answers": invalid,
        "flagged_weak": ";".join(flagged),
        "weak": weak_reason(manifest, answers, invalid) or "",
    }


def load_trust_data(
    paths: Iterable[str | os.PathLike[str]],
    *,
    include_incomplete: bool = False,
    check_events: bool = False,
    progress: bool = False,
) -> TrustData:
    """Load escape-room runs from run/sweep directories and reference-study log directories.

    Args:
        paths: Any mix of run directories, sweep directories and reference log folders.
        include_incomplete: Keep ``running``/``failed`` runs (excluded and reported by default).
        check_events: Parse every line of each ``events.jsonl`` as JSON (default: every line's structure and
            ``seq`` are checked and the game start/end events parsed; see ``docs/run_directory.md``).
        progress: Show a progress bar while reading.

    Raises:
        RunDirError: When a path does not exist or holds neither run directories nor reference logs.
    """
    from tqdm import tqdm  # not tqdm.auto: in a notebook without ipywidgets it warns (TqdmWarning)

    run_dirs_all: list[Path] = []
    reference: list[Path] = []
    excluded: list[tuple[str, str]] = []
    for root in paths:
        root_path = Path(root)
        run_dirs = find_run_dirs(root_path)
        ref_dirs = find_reference_runs(root_path)
        if not run_dirs and not ref_dirs:
            raise RunDirError(
                f"{root_path}: no run directories (manifest.json) or reference logs "
                "(experiment_settings.json + game_*.json) found"
            )
        run_dirs_all.extend(run_dirs)
        reference.extend(ref_dirs)
    # one discovery over every root: a run found twice, or re-run into another directory, counts once
    found = discover_runs(run_dirs_all, include_incomplete=include_incomplete, game="escape_room")
    contract: list[Run] = found.runs
    excluded.extend((str(p), why) for p, why in found.excluded)

    dec, gam, agg, runs = [], [], [], []
    problems: list[str] = []
    items: list[Run | Path] = [*contract, *sorted(set(reference))]
    for item in tqdm(
        items, desc="loading runs", unit="run", disable=not (progress and sys.stderr.isatty()), leave=False
    ):
        try:
            if isinstance(item, Run):
                frames, cell = _load_contract_run(item, full_check=check_events)
                dec.append(frames["decisions"])
                gam.append(frames["games"])
                agg.append(frames["agent_games"])
                first = frames["games"].iloc[0] if len(frames["games"]) else None
                runs.append(
                    {
                        "source": "trustsim",
                        "run_id": item.run_id,
                        "path": str(item.path),
                        **cell,
                        "sessions": int(frames["games"]["session"].nunique()) if first is not None else 0,
                        "games": len(frames["games"]),
                        "config_key": _config_key(item.manifest),
                        "status": item.status,
                        **_weak_columns(item.manifest, frames["decisions"]),
                    }
                )
            else:
                imported = import_reference_run(item)
                dec.append(pd.DataFrame(imported.decisions))
                gam.append(pd.DataFrame(imported.games))
                agg.append(pd.DataFrame(imported.agent_games))
                runs.append({**imported.run, **_weak_columns({}, pd.DataFrame(imported.decisions))})
        except (RunDirError, ReferenceLogError) as exc:
            path = item.path if isinstance(item, Run) else item
            excluded.append((str(path), str(exc)))
            log.warning("excluded %s: %s", path, exc)
    data = TrustData(
        decisions=_finalise(dec, DECISION_COLUMNS),
        games=_finalise(gam, GAME_COLUMNS),
        agent_games=_finalise(agg, AGENT_GAME_COLUMNS),
        runs=pd.DataFrame(runs, columns=list(RUN_COLUMNS)),
        excluded=excluded,
        problems=problems,
    )
    runs_order = sorted(data.games["run_id"].astype(str).unique())
    for table in (data.decisions, data.games, data.agent_games):
        table["run_code"] = pd.Categorical(table["run_id"].astype(str), categories=runs_order).codes.astype(
            "int64"
        )
    data.problems.extend(mixed_configuration_problems(data.runs))
    if data.games.empty:
        raise RunDirError(
            "no escape-room games to analyse"
            + (
                f" ({len(excluded)} run(s) excluded: "
                + "; ".join(f"{p}: {why}" for p, why in excluded[:5])
                + (f"; and {len(excluded) - 5} more" if len(excluded) > 5 else "")
                + ")"
                if excluded
                else ""
            )
        )
    return data


def mixed_configurations(runs: pd.DataFrame) -> pd.DataFrame:
    """Cells whose runs differ in configuration (beyond seeds), with the configuration variants."""
    if runs.empty:
        return pd.DataFrame(columns=[*CELL_KEYS, "variants", "runs"])
    rows = []
    for keys, grp in runs.groupby(list(CELL_KEYS), sort=True):
        variants = grp.groupby("config_key")
        if variants.ngroups > 1:
            desc = "; ".join(f"{k}: {len(g)} run(s) of {sorted(set(g['games']))} games" for k, g in variants)
            rows.append({**dict(zip(CELL_KEYS, keys, strict=True)), "variants": desc, "runs": len(grp)})
    return pd.DataFrame(rows, columns=[*CELL_KEYS, "variants", "runs"])


def mixed_configuration_problems(runs: pd.DataFrame) -> list[str]:
    """Human-readable warnings for :func:`mixed_configurations`."""
    out = []
    for row in mixed_configurations(runs).itertuples(index=False):
        out.append(
            f"mixed configurations in cell model={row.model} schedule={row.schedule} memory={row.memory}: "
            f"{row.variants}"
        )
    return out
