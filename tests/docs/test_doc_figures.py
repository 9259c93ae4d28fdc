"""The figures the docs quote from a command's output are what the command prints today: the study plan's
worked example (docs/analysis.md) and the trust card's cost of the full battery per model (docs/trust_card.md).
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.test_doc_commands import REPO, extract_commands

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ANALYSIS_MD = REPO / "docs" / "analysis.md"
TRUST_CARD_MD = REPO / "docs" / "trust_card.md"


def _plan(fragment: str, out: Path) -> str:
    """Run docs/analysis.md's plan command containing ``fragment`` into ``out`` (pricing left out: the figures
    checked here do not depend on it); its stdout."""
    (cmd,) = [
        c.text for c in extract_commands(ANALYSIS_MD) if c.text.startswith("python -m analysis plan --reference")
        and fragment in c.text
    ]  # fmt: skip
    args = [a for a in shlex.split(cmd)[3:] if a not in ("--model", "own")]
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", *args, "--out", str(out)],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _numbers(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*\.?\d*", text)]


@pytest.mark.slow
def test_the_plan_worked_example_prints_the_documented_table(tmp_path: Path) -> None:
    doc = ANALYSIS_MD.read_text(encoding="utf-8")
    (row,) = [ln for ln in doc.splitlines() if ln.startswith("| gemini-2.5-flash − gpt-5.1 |")]
    printed = next(
        ln for ln in _plan("--compare model", tmp_path / "pair").splitlines() if ln.startswith(row[:28])
    )
    documented, got = _numbers(row.split("|", 2)[2]), _numbers(printed.split("|", 2)[2])
    # difference, its interval, half-width now, sessions and sessions for power (each with its expected)
    assert len(got) >= len(documented) == 8
    for doc_value, value in zip(documented, got, strict=False):
        assert abs(doc_value - value) <= 0.0051, (row, printed)


@pytest.mark.slow
def test_the_replication_plan_asks_the_documented_sessions(tmp_path: Path) -> None:
    doc = " ".join(ANALYSIS_MD.read_text(encoding="utf-8").split())
    out = _plan("--width 0.25 --model own", tmp_path / "all")
    total = re.search(r"total ([\d,]+) sessions in (\d+) job", out)
    assert total is not None, out[-2000:]
    assert f"{total.group(2)} cells, 172 sessions" in doc
    assert f"asks {total.group(1)} sessions" in doc
    with (tmp_path / "all" / "plan.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    (flash,) = [r for r in rows if (r["model"], r["schedule"]) == ("gemini-2.5-flash", "smooth")]
    assert f"gemini-2.5-flash smooth ({int(float(flash['runs']))} sessions" in doc


def _card_rows() -> dict[str, tuple[str, str]]:
    text = TRUST_CARD_MD.read_text(encoding="utf-8")
    table = text[text.index("| model | estimated cost | range |") :].splitlines()[2:]
    rows = {}
    for line in table:
        if not line.startswith("| `"):
            break
        model, cost, span = (c.strip() for c in line.strip("|").split("|"))
        rows[model.strip("`")] = (cost, span)
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(_card_rows()))
def test_the_full_battery_costs_what_the_trust_card_page_says(model: str, tmp_path: Path) -> None:
    cost, span = _card_rows()[model]
    proc = subprocess.run(
        [sys.executable, "-m", "trustsim.battery", "--size", "full", f"model={model}"],
        cwd=tmp_path,  # an empty request store, as the page states
        env={**ENV, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    low, high = (s.strip() for s in span.split("–"))
    assert f"estimated cost {cost} (range {low}–{high})" in proc.stdout, proc.stdout[-1500:]


def _preview(*overrides: str, cwd: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "trustsim", *overrides, "preview=true"],
        cwd=cwd,  # an empty request store
        env={**ENV, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_the_preview_example_of_docs_llm_is_what_preview_prints(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "llm.md").read_text(encoding="utf-8")
    block = doc[doc.index("```\ntrustsim: preview (nothing sent) of smooth") + 4 :].split("```", 1)[0]
    out = _preview("+experiment=smooth", "model=gpt-5.1", "seed=0", cwd=tmp_path)
    for line in block.splitlines():
        shown = line.split("(...)")[0].split(", ...")[0].split(": ...")[0]
        assert shown in out, (line, out[-2500:])


@pytest.mark.slow
def test_the_study_preset_asks_the_documented_requests(tmp_path: Path) -> None:
    out = _preview("+experiment=mid2strike", "model=gpt-5.1", cwd=tmp_path)
    found = re.search(r"requests (\d+)–(\d+):", out)
    assert found is not None, out[-2000:]
    low, high = found.groups()
    running = " ".join((REPO / "docs" / "running.md").read_text(encoding="utf-8").split())
    assert f"`+experiment=mid2strike model=gpt-5.1 preview=true` shows {low}–{high} requests" in running
    escape_room = " ".join((REPO / "docs" / "escape_room.md").read_text(encoding="utf-8").split())
    assert f"up to {high} requests, at least {low}" in escape_room
