"""The end-of-run summary: one screen for a single run, one line per job in a multirun.

Reads only the run directory (manifest and tables), like ``analysis``: what was played, the outcomes, a
per-game (or per-round) sparkline, the LLM accounting, the run directory and the command that analyses it.
A weak model's result is labelled: a model config with ``weak: true`` (the embedded SmolLM2-135M), or a
share of invalid answers above :data:`~trustsim.rundir.weak.WEAK_INVALID_SHARE` (the rule lives in
:mod:`trustsim.rundir.weak`, shared with the trust report and the card).

    python -m trustsim.summary RUN_DIR [--line]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from trustsim.contract import games
from trustsim.interpreter import analysis_command
from trustsim.rundir.reader import RunDirError, find_run_dirs, read_manifest
from trustsim.rundir.weak import weak_reason

SPARK = "▁▂▃▄▅▆▇█"
SPARK_ASCII = "_.-=+*#@"
MAX_TABLE_COLUMNS = 20  # longer series show only the sparkline and the range
TRUE = {"true", "True", "1"}


@dataclass
class Family:
    """What one game family contributes: headline, detail lines, a series for the sparkline, validity."""

    headline: str
    lines: list[str] = field(default_factory=list)
    series_name: str = ""
    series: list[float] = field(default_factory=list)
    series_labels: list[str] = field(default_factory=list)
    extra_rows: list[tuple[str, list[str]]] = field(default_factory=list)  # more rows of the small table
    answers: int = 0  # answers by LLM (or any non-scripted) decision makers
    invalid: int = 0
    short: str = ""  # the one-line form
    who: str = ""  # who played (default: the agent and its model, :func:`who_played`)

    def count_answers(self, valid_flags: Iterable[str]) -> None:
        """Count the model's answers from their tables' ``valid`` cells (anything but true is invalid)."""
        flags = list(valid_flags)
        self.answers = len(flags)
        self.invalid = sum(flag not in TRUE for flag in flags)


def read_rows(run_dir: Path, name: str) -> list[dict[str, str]]:
    path = run_dir / f"{name}.csv"
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def number(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2g}" if abs(x) < 10 else f"{x:.1f}"


def _glyphs() -> str:
    """Block glyphs when stdout can encode them, else ASCII."""
    try:
        SPARK.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return SPARK_ASCII
    return SPARK


def sparkline(
    values: Sequence[float], lo: float | None = None, hi: float | None = None, glyphs: str = SPARK
) -> str:
    """One glyph per value, scaled from ``lo`` (default min, at most 0) to ``hi`` (default max)."""
    if not values:
        return ""
    lo = min(min(values), 0.0) if lo is None else lo
    hi = max(values) if hi is None else hi
    span = hi - lo
    top = len(glyphs) - 1
    return "".join(glyphs[0 if span <= 0 else max(0, min(top, round((v - lo) / span * top)))] for v in values)


def from_model(row: dict[str, str], column: str = "model") -> bool:
    """Whether a row's decision came from a language model (not a scripted agent)."""
    return row.get(column, "scripted") not in ("", "scripted")


def mean_by(
    rows: Iterable[dict[str, str]], key: str, value: Callable[[dict[str, str]], float]
) -> dict[int, float]:
    """Mean of ``value`` per integer ``key`` (e.g. per game number across sessions)."""
    groups: dict[int, list[float]] = {}
    for r in rows:
        k = number(r.get(key))
        if k is not None:
            groups.setdefault(int(k), []).append(value(r))
    return {k: mean(v) for k, v in sorted(groups.items())}


def _spec(manifest: dict[str, Any]) -> Any:
    """The registered game of a run (None: a game this installation does not have)."""
    return games().get(str(manifest.get("game")))


def _generic(run_dir: Path, manifest: dict[str, Any]) -> Family:
    counts = ", ".join(f"{v} {k}" for k, v in (manifest.get("counts") or {}).items())
    return Family(f"{manifest.get('game', '?')}: {counts or 'no counts'}", short=counts)


# -- labels -----------------------------------------------------------------------------------------------
def on_model(who: Any, model: Any) -> str:
    """``who``, and ``on <model>`` when a language model played it."""
    return f"{who}" + (f" on {model}" if model and model != "scripted" else "")


def who_played(manifest: dict[str, Any], extras: Sequence[str] = ()) -> str:
    """``agent X on <model>``, with the manifest cell's ``extras`` keys in parentheses (those set)."""
    cell = manifest.get("cell") or {}
    agent = cell.get("agent") or (manifest.get("config") or {}).get("agent", {}).get("name", "?")
    text = on_model(f"agent {agent}", cell.get("model"))
    shown = [f"{k} {cell[k]}" for k in extras if cell.get(k)]
    return text + (f" ({', '.join(shown)})" if shown else "")


def _llm_line(manifest: dict[str, Any]) -> str | None:
    llm = manifest.get("llm") or {}
    sent, hits = int(llm.get("calls_sent") or 0), int(llm.get("cache_hits") or 0)
    if not sent and not hits:
        return None
    text = f"LLM: {sent} calls sent, {hits} replayed from the store"
    if sent:
        text += (
            f"; per call {llm.get('prompt_tokens', 0) / sent:.0f} prompt + "
            f"{llm.get('completion_tokens', 0) / sent:.0f} completion tokens"
        )
    local = llm.get("local") or {}
    if local.get("prompt_tokens") and not local.get("grammar_calls"):
        text += (
            f"; KV prefix reuse {local.get('reused_tokens', 0) / local['prompt_tokens']:.0%} of prompt tokens"
        )
    cost = float(llm.get("cost_usd") or 0)
    if cost:
        text += f"; cost ${cost:.4f}"
    return text


# -- rendering --------------------------------------------------------------------------------------------
def _family(run_dir: Path, manifest: dict[str, Any]) -> Family:
    spec = _spec(manifest)
    return spec.summary(run_dir) if spec is not None and spec.summary else _generic(run_dir, manifest)


def _table(fam: Family) -> list[str]:
    """The series as a small aligned table (first row the labels), when it fits on a line."""
    if not fam.series or len(fam.series) > MAX_TABLE_COLUMNS:
        return []
    cols = [
        fam.series_labels,
        [_fmt(v) if not 0 < v < 1 or v == round(v, 2) else f"{v:.2f}" for v in fam.series],
    ]
    cols += [r for _, r in fam.extra_rows]
    names = ["", fam.series_name.split(" per ")[0], *(n for n, _ in fam.extra_rows)]
    names[0] = fam.series_name.split(" per ")[-1].split(" (")[0]
    width = [max(len(c[i]) for c in cols) for i in range(len(fam.series))]
    head = max(len(n) for n in names)
    return [
        f"  {name:<{head}}  " + " ".join(f"{v:>{w}}" for v, w in zip(row, width, strict=True))
        for name, row in zip(names, cols, strict=True)
    ]


def summarize(run_dir: str | Path) -> str:
    """The one-screen summary of a finished run directory."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    fam = _family(run_dir, manifest)
    glyphs = _glyphs()
    wall = (manifest.get("timings") or {}).get("wall_s")
    out = [
        f"== {manifest.get('run_id', run_dir.name)}: {manifest.get('status', '?')}"
        + (f" in {wall:.{1 if wall >= 1 else 3}f} s" if isinstance(wall, (int, float)) else "")
        + " ==",
        f"{fam.headline}; {fam.who or who_played(manifest)}",
    ]
    weak = weak_reason(manifest, fam.answers, fam.invalid)
    if weak:
        out.append(
            f"!! WEAK MODEL: {weak}. Treat this result as a smoke test of the pipeline, not as evidence."
        )
    out += fam.lines
    if fam.answers:
        out.append(f"invalid answers: {fam.invalid} of {fam.answers} ({share(fam.invalid, fam.answers)})")
    if fam.series:
        lo, hi = min(fam.series), max(fam.series)
        out.append(
            f"{fam.series_name}: {sparkline(fam.series, glyphs=glyphs)}  (min {_fmt(lo)}, max {_fmt(hi)})"
        )
        out += _table(fam)
    llm = _llm_line(manifest)
    if llm:
        out.append(llm)
    out.append(f"run directory: {run_dir}")
    spec = _spec(manifest)
    sub = spec.analysis if spec is not None else ""
    if sub:
        out.append(f"next: {analysis_command(sub, run_dir)}")
    return "\n".join(out)


def sweep_next_lines(
    sweep_dir: str | Path, job_dirs: Iterable[str | Path], *, battery: bool = False
) -> list[str]:
    """The ``next:`` lines of a finished sweep: the trust card of a trust-card battery, else the analysis
    subcommand of each game its jobs played, each into its own folder (:func:`report_folder`)."""
    if battery:
        return [f"next: {analysis_command('card', sweep_dir, 'card/')}"]
    subs: list[str] = []
    for job_dir in job_dirs:
        try:
            manifest = json.loads((Path(job_dir) / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        spec = _spec(manifest)
        if spec is not None and spec.analysis and spec.analysis not in subs:
            subs.append(spec.analysis)
    return [f"next: {analysis_command(sub, sweep_dir)}" for sub in subs]


def summary_line(run_dir: str | Path) -> str:
    """One line for a job of a multirun: outcomes, the sparkline, a weak label, the directory."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    fam = _family(run_dir, manifest)
    weak = weak_reason(manifest, fam.answers, fam.invalid)
    spark = f" {sparkline(fam.series, glyphs=_glyphs())}" if fam.series else ""
    label = " [WEAK MODEL]" if weak else ""
    return f"{manifest.get('run_id', run_dir.name)}: {fam.short}{spark}{label} -> {run_dir}"


def print_summary(run_dir: str | Path, *, single: bool = True) -> None:
    """Print the summary of a finished run (``single=False``: its one line). A directory without a
    complete manifest (a preview) prints nothing; a summary that cannot be read never fails the run."""
    path = Path(run_dir) / "manifest.json"
    try:
        if not path.is_file() or json.loads(path.read_text(encoding="utf-8")).get("status") != "complete":
            return
        text = summarize(run_dir) if single else "summary: " + summary_line(run_dir)
    except Exception as exc:  # a damaged table must not turn a finished run into a failure
        print(f"trustsim: no summary ({type(exc).__name__}: {exc})", file=sys.stderr)
        return
    print(text, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trustsim.summary", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument(
        "--line", action="store_true", help="one line (as printed for each job of a multirun)"
    )
    args = parser.parse_args(argv)
    if not (args.run_dir / "manifest.json").is_file():
        below = len(find_run_dirs(args.run_dir)) if args.run_dir.is_dir() else 0
        held = f"; it holds {below} run director{'y' if below == 1 else 'ies'}" if below else ""
        print(
            f"trustsim.summary: no manifest.json in {args.run_dir}{held}. Pass one run directory; for many, "
            f"use python -m trustsim.status {args.run_dir}",
            file=sys.stderr,
        )
        return 2
    try:
        print(summary_line(args.run_dir) if args.line else summarize(args.run_dir))
    except RunDirError as exc:
        print(f"trustsim.summary: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
