"""The one reader of run directories: discovery, manifests, events and CSV tables, with one damage rule.

Damage rule (every reader of run directories follows it): a damaged input is reported as a
:class:`DataWarning` naming the file (and line), saying what was used instead; only when nothing usable is
left does the caller fail, with a :class:`RunDirError` giving the reason.

- ``events.jsonl``: a line that is not a JSON event, or whose ``seq`` breaks the 0, 1, 2... sequence, is
  damaged. The readable events are used. Where the game brackets its units of play with start/end events
  (the :class:`~trustsim.rundir.schema.EventUnit` its manifest records), the table rows of units whose events
  are intact are used and the others dropped; a run whose manifest records no unit (written before manifests
  carried it) gets the file-level rule: all rows, with a warning. A missing ``events.jsonl`` is warned about;
  the tables are used unchecked.
- CSV tables: an unparseable table is skipped (the run contributes nothing to that table); a last row cut
  short (no final newline) is dropped.
- ``manifest.json``: missing or not a JSON object: the run is excluded with the reason.

Duplicate runs (the same ``run_id`` and ``config_hash``, e.g. a re-run into a new timestamped directory) are
counted once: :func:`discover_runs` keeps the first by path and reports how many it dropped.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import io
import json
import logging
import os
import re
import string
import sys
import types
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trustsim.rundir.schema import EVENTS, MANIFEST, EventUnit

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)
SHOW_LINES = 3  # damaged lines named in one warning


class RunDirError(ValueError):
    """A path is missing, empty or not a readable run directory, or nothing usable is left in it."""


class DataWarning(UserWarning):
    """Damaged or suspicious input that the reader worked around (the message says where and how)."""


def _warn(message: str) -> None:
    warnings.warn(message, DataWarning, stacklevel=3)


# -- discovery --------------------------------------------------------------------------------------------
def _tables_digest(path: Path) -> str:
    """A digest of a run directory's CSV tables (names and bytes): equal digests, the same results."""
    digest = hashlib.sha256()
    for table in sorted(path.glob("*.csv")):
        digest.update(table.name.encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update(table.read_bytes())
    return digest.hexdigest()


def _warn_without_identity(runs: list[Run]) -> None:
    """Warn about kept runs whose manifest lacks ``run_id`` or ``config_hash``: a copy of them cannot be told
    from another run, so it would be counted twice. Named as a likely duplicate when its tables are
    byte-identical to another kept run's."""
    anonymous = [r for r in runs if not r.manifest.get("run_id") or not r.manifest.get("config_hash")]
    if not anonymous:
        return
    digests: dict[str, list[Path]] = {}
    for run in runs:
        digests.setdefault(_tables_digest(run.path), []).append(run.path)
    for run in anonymous:
        twins = [p for p in digests[_tables_digest(run.path)] if p != run.path]
        same = (
            f"; its tables are identical to {twins[0]}'s: probably a copy, counted twice (remove it or restore "
            "its manifest)"
            if twins
            else ""
        )
        _warn(
            f"{run.path / 'manifest.json'} has no run identity (run_id and config_hash): a duplicate of this run "
            f"cannot be recognised, so it is counted as a run of its own{same}"
        )


@dataclass(frozen=True)
class Run:
    """One run directory and its parsed manifest."""

    path: Path
    manifest: dict[str, Any]

    @property
    def run_id(self) -> str:
        """The manifest's run id (falls back to the directory name)."""
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def config_hash(self) -> str:
        """The manifest's config hash (empty when absent)."""
        return str(self.manifest.get("config_hash") or "")

    @property
    def status(self) -> str:
        """``running``, ``complete`` or ``failed`` (``unknown`` when absent)."""
        return str(self.manifest.get("status") or "unknown")

    @property
    def game(self) -> str:
        """Game family (``escape_room``, ``reliance``, ``arena``...)."""
        return str(self.manifest.get("game") or "")

    @property
    def unit(self) -> EventUnit | None:
        """The game's unit of play, as the manifest records it (None: the file-level damage rule only)."""
        return EventUnit.from_manifest(self.manifest)

    @property
    def cell(self) -> dict[str, Any]:
        """Cell keys identifying the experimental cell."""
        cell = self.manifest.get("cell") or {}
        return dict(cell) if isinstance(cell, dict) else {}

    @property
    def has_events(self) -> bool:
        """Whether the run keeps an ``events.jsonl`` (an extraction output declares ``"events": false``)."""
        return self.manifest.get("events", True) is not False and self.manifest.get("experiment") != "extract"

    @property
    def failure_reason(self) -> str:
        """The failure reason recorded in the manifest, if any."""
        failure = self.manifest.get("failure")
        if isinstance(failure, dict):
            return str(failure.get("reason") or "")
        return ""


@dataclass
class Discovery:
    """Result of :func:`discover_runs`: the runs kept, those set aside (with reasons) and duplicates dropped."""

    runs: list[Run] = field(default_factory=list)
    excluded: list[tuple[Path, str]] = field(default_factory=list)
    duplicates: list[tuple[Path, Path, str]] = field(default_factory=list)  # (dropped, kept, run id)

    def report(self) -> str:
        """One line per excluded or duplicate run, for users (empty string when none)."""
        lines = [f"excluded {p}: {why}" for p, why in self.excluded]
        lines += [
            f"excluded {p}: duplicate of run {rid} at {kept} (same run id and config hash; counted once)"
            for p, kept, rid in self.duplicates
        ]
        return "\n".join(lines)

    def summary(self) -> str:
        """``N run(s) kept, M excluded, K duplicate(s) dropped``."""
        return (
            f"{len(self.runs)} run(s) kept, {len(self.excluded)} excluded, "
            f"{len(self.duplicates)} duplicate(s) dropped"
        )


def find_run_dirs(root: str | os.PathLike[str]) -> list[Path]:
    """All directories under ``root`` (itself included) that hold ``manifest.json``, sorted.

    A run directory's subdirectories are not searched further.

    Raises:
        RunDirError: When ``root`` does not exist or is not a directory.
    """
    base = Path(root)
    if not base.exists():
        raise RunDirError(f"{base}: no such directory")
    if not base.is_dir():
        raise RunDirError(f"{base}: not a directory")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        if MANIFEST in filenames:
            found.append(Path(dirpath))
            dirnames[:] = []
        else:
            dirnames.sort()
    return sorted(found)


def read_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a run directory's ``manifest.json``.

    Raises:
        RunDirError: When the manifest is missing, unreadable, not JSON or not a JSON object, or one of its
            object fields (``config``, ``counts``, ``tables``, ``timings``, ``llm``, ``unit``) is not one.
    """
    path = Path(run_dir) / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RunDirError(f"{path}: missing manifest") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: unreadable ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: expected a JSON object, got {type(data).__name__}")
    for name in _OBJECT_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], dict):
            raise RunDirError(f"{path}: '{name}' must be a JSON object, got {type(data[name]).__name__}")
    return data


_OBJECT_FIELDS = ("config", "counts", "tables", "timings", "llm", "unit")


def discover_runs(
    paths: Iterable[str | os.PathLike[str]],
    *,
    include_incomplete: bool = False,
    game: str | None = None,
) -> Discovery:
    """Find and vet every run directory under the given run or sweep directories.

    Args:
        paths: Run directories and/or sweep directories, in any mix.
        include_incomplete: Keep ``running``/``failed`` runs instead of excluding them.
        game: Keep only runs of this game family (others are reported as excluded).

    Returns:
        A :class:`Discovery` with kept runs (sorted by path, each run counted once: the same directory given
        twice, or a re-run with the same run id and config hash, is a duplicate) and excluded ones.
    """
    out = Discovery()
    seen: set[Path] = set()
    candidates: list[Run] = []
    for root in paths:
        for run_dir in find_run_dirs(root):
            resolved = run_dir.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            try:
                manifest = read_manifest(run_dir)
            except RunDirError as exc:  # damage: warned about, and listed with the exclusions
                _warn(f"{exc}; skipped this run")
                out.excluded.append((run_dir, str(exc)))
                continue
            run = Run(run_dir, manifest)
            if game is not None and run.game and run.game != game:
                out.excluded.append((run_dir, f"game is {run.game!r}, not {game!r}"))
                continue
            if run.status != "complete" and not include_incomplete:
                why = f"status {run.status!r}"
                if run.failure_reason:
                    why += f" ({run.failure_reason})"
                out.excluded.append((run_dir, why + "; use --include-incomplete to keep it"))
                continue
            candidates.append(run)
    # complete runs first, then by path: a duplicate keeps its complete copy
    candidates.sort(key=lambda r: (r.status != "complete", str(r.path)))
    kept: dict[tuple[str, str], Run] = {}
    for run in candidates:
        key = (run.run_id, run.config_hash)
        if key in kept:
            out.duplicates.append((run.path, kept[key].path, run.run_id))
            continue
        kept[key] = run
        out.runs.append(run)
    out.runs.sort(key=lambda r: str(r.path))
    _warn_without_identity(out.runs)
    for path, why in out.excluded:
        log.info("excluded %s: %s", path, why)
    if out.duplicates:
        shown = "; ".join(f"{p} (duplicate of {kept})" for p, kept, _ in out.duplicates[:SHOW_LINES])
        more = len(out.duplicates) - SHOW_LINES
        _warn(
            f"dropped {len(out.duplicates)} duplicate run(s) (same run id and config hash as a run already "
            f"loaded, e.g. a re-run into a new directory; each run is counted once): {shown}"
            + (f"; and {more} more" if more > 0 else "")
        )
    return out


# -- events -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EventScan:
    """What :func:`scan_events` found in one ``events.jsonl``."""

    path: Path
    present: bool
    lines: int = 0
    damaged: tuple[tuple[int, str], ...] = ()  # (1-based line, what is wrong)
    # unit key -> (start line, end line); located only in a damaged file (in an intact one every unit is usable)
    units: dict[str, tuple[int, int]] = field(default_factory=dict)
    unit: EventUnit | None = None
    problem: str = ""  # why the file could not be used at all (missing, empty, unreadable)

    @property
    def ok(self) -> bool:
        """Present and undamaged."""
        return self.present and not self.damaged

    def intact_units(self) -> set[str]:
        """Keys of units whose start and end events are readable with no damaged line between them."""
        bad = [line for line, _ in self.damaged]
        out = set()
        for key, (start, end) in self.units.items():
            i = bisect.bisect_left(bad, start)
            if i == len(bad) or bad[i] > end:
                out.add(key)
        return out

    def where(self) -> str:
        """``file:line (what)`` for the first damaged lines, and how many more."""
        shown = [f"{self.path}:{line}: damaged event ({why})" for line, why in self.damaged[:SHOW_LINES]]
        more = len(self.damaged) - SHOW_LINES
        return "; ".join(shown) + (f"; and {more} more damaged line(s)" if more > 0 else "")


def _line_problem(raw: bytes, full: bool) -> tuple[str | None, int | None, dict | None]:
    """(problem, seq, parsed event or None). ``full`` parses the line; otherwise only its structure is checked
    (``{"seq":N,...}`` on one line) and the caller parses the unit events it needs."""
    line = raw.rstrip(b"\r")
    if full or not (line.startswith(b'{"seq":') and line[7:8].isdigit() and line.endswith(b"}")):
        try:
            event = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            return f"not JSON ({getattr(exc, 'msg', exc)})", None, None
        if not isinstance(event, dict):
            return "not a JSON object", None, None
        seq = event.get("seq")
        if not isinstance(seq, int):
            return "no seq", None, event
        return None, seq, event
    try:
        return None, int(line[7 : line.find(b",", 7)]), None
    except ValueError:
        return "not a JSON event (bad seq)", None, None


def _unit_key(unit: EventUnit, event: dict) -> str | None:
    try:
        return unit.event_key.format(**{k: event[k] for k in unit.key})
    except (KeyError, IndexError, ValueError):
        return None


_SEQ_LINE = re.compile(rb'^\{"seq":(\d+),[^\n]*\}$', re.MULTILINE)


def _scan_intact(path: Path, data: bytes, unit: EventUnit | None) -> EventScan | None:
    """The fast path for an undamaged file (every line ``{"seq":<line-1>,...}``), else None."""
    n = data.count(b"\n")
    if not data.endswith(b"\n"):
        return None
    seqs = _SEQ_LINE.findall(data)
    if len(seqs) != n or any(int(seq) != i for i, seq in enumerate(seqs)):
        return None
    return EventScan(path, True, n, (), {}, unit)  # intact: every unit is usable, none needs locating


@lru_cache(maxsize=256)
def _scan_cached(path: Path, stamp: tuple[int, int], unit: EventUnit | None, full: bool) -> EventScan:
    markers = () if unit is None else (f'"type":"{unit.start}"'.encode(), f'"type":"{unit.end}"'.encode())
    data = path.read_bytes()
    if not full:
        intact = _scan_intact(path, data, unit)
        if intact is not None:
            return intact
    lines = data.split(b"\n")
    cut = lines[-1] != b""  # the last line has no newline: a write cut short (parsed in full to be sure)
    if not cut:
        lines.pop()
    parsed = [
        ("empty line", None, None)
        if not raw.strip()
        else _line_problem(raw, full or (cut and i == len(lines) - 1))
        for i, raw in enumerate(lines)
    ]
    damaged: list[tuple[int, str]] = []
    starts: dict[str, int] = {}
    units: dict[str, tuple[int, int]] = {}
    expected = 0
    unreadable = 0  # damaged lines since the last good one (each may have been an event)
    for i, (problem, seq, event) in enumerate(parsed):
        lineno = i + 1
        if problem is not None:
            damaged.append((lineno, problem))
            unreadable += 1
            continue
        if seq is not None and expected < seq <= expected + unreadable:
            expected = seq  # the damaged lines before it were events of this file
        unreadable = 0
        if seq != expected:
            # a forward jump that the next line continues: events were lost (the numbering goes on from here);
            # anything else (a second writer's lines, a repeated block) is foreign: skipped, numbering kept
            following = parsed[i + 1][1] if i + 1 < len(parsed) else None
            lost = seq is not None and seq > expected and following in (seq + 1, None)
            damaged.append(
                (lineno, f"seq {seq}, expected {expected}" + ("; events lost before it" if lost else ""))
            )
            if lost and seq is not None:
                expected = seq + 1
            continue
        expected += 1
        if unit is None:
            continue
        raw = lines[i]
        if event is None:  # compact line: the type is checked without parsing
            if not any(m in raw[:80] for m in markers):
                continue
            try:
                event = json.loads(raw)
            except ValueError as exc:
                damaged.append((lineno, f"not JSON ({getattr(exc, 'msg', exc)})"))
                continue
        key = _unit_key(unit, event)
        if key is None:
            continue
        if event.get("type") == unit.start:
            starts[key] = lineno
        elif event.get("type") == unit.end and key in starts:
            units[key] = (starts.pop(key), lineno)
    return EventScan(path, True, len(lines), tuple(damaged), units, unit)


def scan_events(run: Run | str | os.PathLike[str], *, full: bool = False) -> EventScan:
    """Check a run's ``events.jsonl`` line by line and find its units of play (cached per file version).

    Args:
        run: A :class:`Run`, or a run directory (its manifest is read for the unit of play; an unreadable one
            leaves the file-level rule).
        full: Parse every line as JSON (default: check each line's structure and ``seq`` and parse only the
            unit start/end events and a last line without its newline).
    """
    if isinstance(run, Run):
        run_dir, unit = run.path, run.unit
    else:
        run_dir = Path(run)
        try:
            unit = EventUnit.from_manifest(read_manifest(run_dir))
        except RunDirError:
            unit = None
    path = run_dir / EVENTS
    try:
        st = path.stat()
        if not path.is_file():
            raise IsADirectoryError(f"{path} is not a file")
        if st.st_size == 0:
            return EventScan(path, False, unit=unit, problem="empty")
        return _scan_cached(path, (st.st_size, st.st_mtime_ns), unit, full)
    except FileNotFoundError:
        return EventScan(path, False, unit=unit, problem="missing")
    except OSError as exc:
        return EventScan(path, False, unit=unit, problem=f"unreadable ({exc.strerror or exc})")


def iter_events(run_dir: str | os.PathLike[str], *, strict: bool = False) -> Iterator[dict[str, Any]]:
    """Yield the readable events of ``events.jsonl`` in file order.

    Damaged lines (not a JSON object, e.g. a cut last line or garbage in the middle) are skipped; one
    :class:`DataWarning` names the file and the lines and says how many events were used.

    Args:
        run_dir: The run directory.
        strict: Stop at the first damaged line instead of skipping it.

    Raises:
        RunDirError: When the file does not exist or cannot be read.
    """
    path = Path(run_dir) / EVENTS
    damaged: list[tuple[int, str]] = []
    used = 0
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing events file") from None
    except OSError as exc:
        raise RunDirError(f"{path}: unreadable ({exc})") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
                if not isinstance(event, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                damaged.append((lineno, str(getattr(exc, "msg", exc))))
                if strict:
                    break
                continue
            used += 1
            yield event
    if damaged:
        scan = EventScan(path, True, lineno, tuple(damaged))
        rest = "stopped there" if strict else "skipped"
        _warn(f"{scan.where()}; {rest}, using {used} readable event(s)")


def read_events(run_dir: str | os.PathLike[str], *, strict: bool = False) -> list[dict[str, Any]]:
    """All readable events of a run (see :func:`iter_events`)."""
    return list(iter_events(run_dir, strict=strict))


# -- tables -----------------------------------------------------------------------------------------------
def _cut_last_row(path: Path) -> bool:
    """True when the file does not end with a newline (a row cut short by a crash)."""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def read_table(
    run: Run, name: str, *, cell_keys: bool = True, usecols: Iterable[str] | None = None
) -> pd.DataFrame | None:
    """Read one CSV table of a run, with the manifest's cell keys and run id attached.

    Columns already in the CSV win over manifest cell keys of the same name (a mismatch is warned about).
    A last row cut short (the file does not end with a newline) is dropped with a warning.

    Args:
        run: The run.
        name: File name, e.g. ``games.csv``.
        cell_keys: Attach ``run_id`` and the manifest ``cell`` keys as columns.
        usecols: Read only these columns (those absent from the file are ignored).

    Returns:
        The table, or None when the file does not exist.

    Raises:
        RunDirError: When the file exists but cannot be parsed as CSV.
    """
    import pandas as pd

    path = run.path / name
    if not path.exists():
        return None
    try:
        cut = _cut_last_row(path)
        source: Any = path
        if cut:  # parse as if the cut row were absent (its NaNs would change the column types)
            data = path.read_bytes()
            source = io.BytesIO(data[: data.rfind(b"\n") + 1])
        # every column is parsed, so a row with extra fields is an error wherever it is
        df = pd.read_csv(source, keep_default_na=True, encoding="utf-8", on_bad_lines="error")
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        raise RunDirError(f"{path}: unreadable CSV ({' '.join(str(exc).split())})") from exc
    if cut:
        _warn(f"{path}:{len(df) + 2}: last row cut short; dropped it, using {len(df)} row(s)")
    df = _vetted(run, name, path, df, cut)
    if usecols is not None:
        wanted = set(usecols)
        df = df[[c for c in df.columns if c in wanted]]
    if not cell_keys:
        return df
    if "run_id" not in df.columns:
        df.insert(0, "run_id", run.run_id)
    for key, value in run.cell.items():
        if key in df.columns:
            vals = df[key].dropna().astype(str).unique()
            if len(vals) and any(v != str(value) for v in vals):
                _warn(
                    f"{path}: column {key!r} has {sorted(vals)} but manifest cell says {value!r}; using the table"
                )
        else:
            df[key] = value
    return df


def _vetted(run: Run, name: str, path: Path, df: pd.DataFrame, cut: bool) -> pd.DataFrame:
    """Say what would otherwise go silently wrong with a table: fewer (or more) rows than the finished job's
    manifest records for it, and rows whose unit key (``session``, ``game``, ...) is not a whole number in a
    column of whole numbers (dropped, counted: no analysis could place them)."""
    import pandas as pd

    recorded = (run.manifest.get("tables") or {}).get(name.removesuffix(".csv"))
    if run.status == "complete" and isinstance(recorded, int) and not isinstance(recorded, bool):
        if len(df) + int(cut) < recorded:
            _warn(
                f"{path}: {len(df)} row(s), but the run recorded {recorded}: {recorded - len(df)} row(s) are "
                "missing (deleted or lost); the analysis uses the rows there are"
            )
        elif len(df) > recorded:
            _warn(f"{path}: {len(df)} row(s), but the run recorded {recorded}: the file was changed since")
    unit = run.unit
    template = unit.table_key(name.removesuffix(".csv")) if unit is not None and len(df) else None
    if template is None:
        return df
    bad = pd.Series(False, index=df.index)
    shown: set[str] = set()
    fields = [f for f in _fields(template) if f in df.columns]
    for field_name in fields:
        values = pd.to_numeric(df[field_name], errors="coerce")
        if values.notna().mean() < 0.5:  # a key of names (a cluster, a match): nothing to check
            continue
        wrong = values.isna() | (values % 1 != 0)
        shown.update(repr(str(v)) for v in df.loc[wrong, field_name])
        bad |= wrong
    if not bad.any():
        return df
    _warn(
        f"{path}: {int(bad.sum())} row(s) whose {' / '.join(fields)} is not a whole number "
        f"({', '.join(sorted(shown)[:3])}); dropped them, using {int((~bad).sum())} row(s)"
    )
    return df[~bad.to_numpy()]


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _key_series(df: pd.DataFrame, template: str) -> pd.Series | None:
    """Each row's unit key from a ``str.format`` template over its columns (None if a column is absent)."""
    import pandas as pd

    out = pd.Series("", index=df.index, dtype=object)
    for literal, fname, _, _ in string.Formatter().parse(template):
        if literal:
            out = out + literal
        if fname:
            if fname not in df.columns:
                return None
            col = df[fname]
            if col.dtype.kind == "f" and col.notna().all() and bool((col % 1 == 0).all()):
                col = col.astype("int64")
            out = out + col.astype(str)
    return out


def usable_rows(run: Run, table: str, df: pd.DataFrame, *, full: bool = False) -> pd.DataFrame:
    """Apply the damage rule of ``events.jsonl`` to rows of one table of ``run``.

    Undamaged events: ``df`` as it is. Missing events: ``df`` as it is, with a warning. Damaged events: the
    rows of units whose events are intact, with a warning naming the file and line and saying how many units
    were used (a game without event units keeps all rows).
    """
    if not run.has_events:
        return df
    scan = scan_events(run, full=full)
    label = table if table.endswith(".csv") else f"{table}.csv"
    if not scan.present:
        _warn(f"{scan.path}: {scan.problem}; using {run.path / label} without checking it against the events")
        return df
    if scan.ok:
        return df
    unit = scan.unit
    template = unit.table_key(table.removesuffix(".csv")) if unit is not None else None
    keys = _key_series(df, template) if template is not None and len(df) else None
    if unit is None or keys is None:
        _warn(
            f"{scan.where()}; using all {len(df)} row(s) of {run.path / label} (they cannot be checked per unit)"
        )
        return df
    intact = scan.intact_units()
    mask = keys.isin(intact)
    n_units = keys.nunique()
    kept_units = keys[mask].nunique()
    _warn(
        f"{scan.where()}; using the {kept_units} of {n_units} {unit.label}(s) of {run.path / label} whose "
        f"events are intact ({int((~mask).sum())} row(s) dropped)"
    )
    return df[mask.to_numpy()]


def read_tables(
    runs: Iterable[Run], name: str, *, cell_keys: bool = True, check_events: bool = True, full: bool = False
) -> pd.DataFrame:
    """Concatenate one CSV table over many runs, following the damage rule.

    Runs without the file are skipped; an unreadable file is skipped with a :class:`DataWarning`; with
    ``check_events`` the rows are vetted against each run's ``events.jsonl`` (:func:`usable_rows`).
    """
    import pandas as pd

    frames = []
    for run in runs:
        try:
            df = read_table(run, name, cell_keys=cell_keys)
        except RunDirError as exc:
            _warn(f"{exc}; skipped it")
            continue
        if df is None or df.empty:
            continue
        if check_events:
            df = usable_rows(run, name, df, full=full)
        if not df.empty:
            frames.append(df)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


class print_data_warnings:
    """Within the block, every :class:`DataWarning` is printed once as ``warning: <message>`` on stderr (no
    source line); other warnings are shown as usual. Collected messages are in :attr:`messages`."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self.messages: list[str] = []
        self._ctx = warnings.catch_warnings()

    def __enter__(self) -> print_data_warnings:
        self._ctx.__enter__()
        warnings.simplefilter("always", DataWarning)
        original = warnings.showwarning

        def show(
            message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None
        ) -> None:
            if issubclass(category, DataWarning):
                text = str(message)
                if text not in self.messages:
                    self.messages.append(text)
                    print(f"warning: {text}", file=self.stream or sys.stderr, flush=True)
            else:
                original(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: types.TracebackType | None,
    ) -> None:
        self._ctx.__exit__(kind, exc, traceback)
