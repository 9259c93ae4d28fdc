"""The card as self-contained HTML (one A4 page when printed), the side-by-side comparison and cards.csv."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.card.collect import CALIBRATION_KEYS, OFFLINE, Subject
from analysis.card.figures import NOT_RUN, OK, UNAVAILABLE, UNDERPOWERED, Figure
from analysis.family_registry import families
from analysis.family_registry import title as family_title
from analysis.text import interval_text


def card_sections() -> list[tuple[str, str, tuple[str, ...]]]:
    """(family, heading, figure keys) of the card's sections: each declared family's (analysis.family_registry), then
    calibration across all games."""
    declared = [(game, f.card.heading, f.card.keys) for game, f in families().items() if f.card is not None]
    return [*declared, ("calibration", "Calibration of stated confidence, all games", CALIBRATION_KEYS)]


def figure_keys() -> tuple[str, ...]:
    """Every figure of a card, in the order shown (the columns of ``cards.csv``)."""
    return tuple(k for _, _, keys in card_sections() for k in keys)


def yardstick_version() -> str:
    """The escape-room yardstick's model, as the card's note names it (e.g. ``model v2``)."""
    try:
        from analysis.yardstick.model import MODEL_VERSION
    except ModuleNotFoundError:
        return "not installed"
    return f"model {MODEL_VERSION}"


CSS = """
@page { size: A4; margin: 9mm; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", Arial, sans-serif; font-size: 7.6pt; color: #1d2430; margin: 0;
  width: 192mm; }
h1 { font-size: 13pt; margin: 0 0 1mm 0; } h1 small { font-size: 9pt; color: #5a6577; font-weight: normal; }
.sub { color: #5a6577; margin-bottom: 2mm; font-size: 6.8pt; }
section { border: 0.3mm solid #c9d1dd; border-radius: 1.5mm; padding: 1.2mm 2mm; margin-bottom: 1.6mm;
  break-inside: avoid; }
h2 { font-size: 8.6pt; margin: 0 0 1mm 0; color: #23406e; }
table { border-collapse: collapse; width: 100%; }
td { padding: 0.35mm 1mm; vertical-align: top; border-top: 0.2mm solid #eef1f5; }
td.label { width: 37%; } td.value { width: 25%; font-weight: 600; white-space: nowrap; }
td.note { color: #6b7587; font-size: 6.4pt; }
tr.not-run td.value, tr.not-available td.value { color: #8a93a3; font-style: italic; font-weight: normal; }
tr.underpowered td.value { color: #a05a00; }
.badge { display: inline-block; font-size: 6.6pt; padding: 0 1mm; border-radius: 1mm; margin-left: 1mm;
  font-weight: normal; }
.badge.not-run { background: #eceff3; color: #5a6577; } .badge.underpowered { background: #fff0d6; color: #8a4d00; }
.badge.not-available { background: #eceff3; color: #5a6577; }
.cols { display: flex; gap: 2mm; } .cols > section { flex: 1; }
.calib { display: flex; gap: 2mm; align-items: flex-start; } .calib table { flex: 1; }
.prov td { font-size: 6.8pt; } .prov td.k { width: 24%; color: #5a6577; }
.foot { color: #6b7587; font-size: 6.8pt; margin-top: 1mm; }
.warn { background: #fff0d6; color: #8a4d00; border-radius: 1mm; padding: 0.8mm 2mm; margin-bottom: 1.6mm;
  font-weight: 600; }
"""


def _fmt_class(fig: Figure) -> str:
    return {NOT_RUN: "not-run", UNDERPOWERED: "underpowered", UNAVAILABLE: "not-available"}.get(
        fig.status, "ok"
    )


def _short(text: str, limit: int = 105) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _row(fig: Figure) -> str:
    cls = _fmt_class(fig)
    value = html.escape(_value_text(fig))
    badge = ""
    if fig.status in (NOT_RUN, UNDERPOWERED, UNAVAILABLE) and fig.status != NOT_RUN:
        badge = f'<span class="badge {cls}">{html.escape(fig.status)}</span>'
    note = fig.reference + ("; " if fig.reference and fig.note else "") + fig.note
    return (
        f'<tr class="{cls}" data-key="{fig.key}" data-status="{html.escape(fig.status)}">'
        f'<td class="label">{html.escape(fig.label)}</td><td class="value">{value}{badge}</td>'
        f'<td class="note">{html.escape(_short(note))}</td></tr>'
    )


def _value_text(fig: Figure) -> str:
    if fig.status == NOT_RUN:
        return "not run"
    if fig.status == UNAVAILABLE or math.isnan(fig.estimate):
        return "n/a"
    text = interval_text(fig.estimate, fig.low, fig.high, fig.digits, unit=fig.unit)
    if fig.status == UNDERPOWERED and fig.n is not None:
        text += f" n={fig.n}"
    return text


def reliability_svg(bins: Sequence[dict[str, float]], size: int = 112) -> str:
    """A small reliability diagram: observed frequency against stated probability, dot area ∝ count."""
    pad = 14
    inner = size - 2 * pad
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}" '
        f'role="img" aria-label="reliability diagram">',
        f'<rect x="{pad}" y="{pad}" width="{inner}" height="{inner}" fill="#fafbfc" stroke="#c9d1dd"/>',
        f'<line x1="{pad}" y1="{pad + inner}" x2="{pad + inner}" y2="{pad}" stroke="#9aa5b5" stroke-dasharray="2,2"/>',
        f'<text x="{size / 2}" y="{size - 2}" font-size="7" text-anchor="middle" fill="#5a6577">stated p</text>',
        f'<text x="7" y="{size / 2}" font-size="7" text-anchor="middle" fill="#5a6577" '
        f'transform="rotate(-90 7 {size / 2})">observed</text>',
    ]
    if not bins:
        parts.append(
            f'<text x="{size / 2}" y="{size / 2}" font-size="8" text-anchor="middle" fill="#8a93a3">'
            "no predictions</text>"
        )
    total = sum(b["count"] for b in bins) or 1
    points = []
    for b in bins:
        x = pad + b["mean_p"] * inner
        y = pad + (1 - b["observed"]) * inner
        r = 1.5 + 5 * math.sqrt(b["count"] / total)
        points.append(f"{x:.1f},{y:.1f}")
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#2f6db5" fill-opacity="0.75"/>')
    if len(points) > 1:
        parts.insert(
            5, f'<polyline points="{" ".join(points)}" fill="none" stroke="#2f6db5" stroke-width="1"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _prov_rows(s: Subject) -> str:
    p = s.provenance
    if not p:
        return "<tr><td>no provenance</td></tr>"
    model = ", ".join(f"{k}={v}" for k, v in p.get("model", {}).items())
    sample = "; ".join(
        f"{fam}: " + ", ".join(f"{v:,} {k}" for k, v in c.items() if k in (
            "sessions", "games", "decisions", "scenarios", "matches", "pairs", "exchanges"))
        for fam, c in p.get("sample", {}).items()
    )  # fmt: skip
    invalid = "; ".join(
        f"{fam} {bad / total:.1%} ({bad}/{total})" if total else f"{fam} n/a (no answers)"
        for fam, (bad, total) in p.get("invalid", {}).items()
    )
    cost = p.get("cost_usd")
    cost_text = "n/a" if cost is None or (isinstance(cost, float) and math.isnan(cost)) else f"${cost:,.4f}"
    rows = [
        ("model / decoding" if s.llm else "agents", model),
        ("trustsim / git", f"{p.get('trustsim')} / {p.get('git')}"),
        ("dates / battery", f"{p.get('dates')} / {p.get('battery_size')}"),
        ("sample sizes", f"{p.get('runs')} runs; {sample}"),
        ("LLM calls / tokens / cost", f"{p.get('llm_calls')} / {p.get('tokens')} / {cost_text}"),
        ("invalid answers", invalid or "n/a"),
    ]
    return "".join(
        f'<tr><td class="k">{html.escape(k)}</td><td>{html.escape(_short(v, 260))}</td></tr>' for k, v in rows
    )


def _kind(s: Subject) -> str:
    """``reference logs``, ``battery`` (some runs of a trust-card battery) or ``runs`` (none)."""
    if s.reference and not s.runs:
        return "reference logs"
    return (
        "battery"
        if str(s.provenance.get("battery_size", "")).split(",")[0] not in ("", "(not a battery run)")
        else "runs"
    )


def _kind_text(s: Subject) -> str:
    return {
        "reference logs": "reference-study logs: escape room only",
        "battery": "trust-card battery",
        "runs": "runs outside a trust-card battery",
    }[_kind(s)]


def _warnings_html(s: Subject) -> str:
    """The weak-model label and, for offline cards, which agents are pooled and what was kept apart."""
    out = []
    weak = s.provenance.get("weak")
    if weak:
        out.append(
            f'<div class="warn" data-warning="weak">⚠ Weak model: {html.escape(weak)}. Treat this card as a '
            "smoke test of the pipeline, not as evidence about the model.</div>"
        )
    if not s.llm and s.lineup:
        pooled = "; ".join(
            f"{family_title(fam)}: {', '.join(sorted(agents))}" for fam, agents in sorted(s.lineup.items())
        )
        apart = f" Kept apart: {html.escape('; '.join(s.notes))}." if s.notes else ""
        out.append(
            f'<div class="sub" data-warning="lineup">Agents on this card: {html.escape(pooled)}.{apart}</div>'
        )
    return "".join(out)


def card_html(s: Subject, *, generated: str) -> str:
    """One subject's card: a self-contained page (inline CSS and SVG, no script, no network)."""
    title = (
        "offline agents"
        if s.name == OFFLINE
        else (f"offline agent {s.name.removeprefix(OFFLINE + '-')}" if not s.llm else s.name)
    )
    kind = _kind_text(s)
    sections = []
    for fam, heading, keys in card_sections():
        rows = "".join(_row(s.figures[k]) for k in keys if k in s.figures)
        body = f"<table>{rows}</table>"
        if fam == "calibration":
            body = f'<div class="calib">{body}{reliability_svg(s.reliability)}</div>'
        sections.append(f'<section data-family="{fam}"><h2>{html.escape(heading)}</h2>{body}</section>')
    sections_html = "".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Trust card: {html.escape(title)}</title>
<style>{CSS}</style></head>
<body data-subject="{html.escape(s.name)}">
<h1>Trust card: {html.escape(title)} <small>{html.escape(kind)}</small></h1>
<div class="sub">Values are estimates with 95% cluster-bootstrap (or Wilson) intervals in brackets.
<b>not run</b> = that part of the battery has no data; <b>underpowered</b> = too few clusters for an interval
or below the analysis's minimum sample (n shown). The escape-room regret is a model-based yardstick
({html.escape(yardstick_version())}), not the exact optimum of the game.</div>
{_warnings_html(s)}{sections_html}
<section data-family="provenance" class="prov"><h2>Provenance</h2><table>{_prov_rows(s)}</table></section>
<div class="foot">trustsim trust card · generated {html.escape(generated)} · python -m analysis card · docs/trust_card.md</div>
</body></html>
"""


def compare_html(subjects: Sequence[Subject], *, generated: str) -> str:
    """Several subjects side by side: one row per figure, one column per subject."""
    head = "".join(f"<th>{html.escape(s.name)}</th>" for s in subjects)
    body = []
    for _, heading, keys in card_sections():
        body.append(f'<tr class="group"><th colspan="{len(subjects) + 1}">{html.escape(heading)}</th></tr>')
        for key in keys:
            label = next((s.figures[key].label for s in subjects if key in s.figures), key)
            cells = []
            for s in subjects:
                fig = s.figures.get(key)
                if fig is None:
                    cells.append('<td class="not-run">not run</td>')
                    continue
                cells.append(
                    f'<td class="{_fmt_class(fig)}" title="{html.escape(fig.note)}">{html.escape(_value_text(fig))}</td>'
                )
            body.append(
                f'<tr data-key="{key}"><td class="label">{html.escape(label)}</td>{"".join(cells)}</tr>'
            )
    links = " · ".join(
        f'<a href="{html.escape(card_filename(s))}">{html.escape(s.name)}</a>' for s in subjects
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Trust cards compared</title>
<style>
body {{ font-family: "DejaVu Sans", Arial, sans-serif; font-size: 9pt; color: #1d2430; margin: 6mm; }}
table {{ border-collapse: collapse; }} th, td {{ padding: 1mm 2mm; border-bottom: 0.2mm solid #e3e7ee; text-align: left; }}
tr.group th {{ background: #eef2f8; color: #23406e; }} td.not-run, td.not-available {{ color: #8a93a3; font-style: italic; }}
td.underpowered {{ color: #a05a00; }} td.label {{ color: #3b4556; }}
@page {{ size: A4 landscape; margin: 8mm; }}
</style></head><body>
<h1>Trust cards compared</h1><p>Cards: {links}. Grey italic: not run / not available; orange: underpowered.</p>
<table><tr><th>figure</th>{head}</tr>{"".join(body)}</table>
<p style="color:#6b7587">generated {html.escape(generated)} · python -m analysis card</p>
</body></html>
"""


def card_filename(s: Subject) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s.name)
    return f"card_{safe}.html"


def cards_table(subjects: Sequence[Subject]) -> pd.DataFrame:
    """cards.csv: one row per subject; per figure the estimate, ``_low``, ``_high``, ``_n`` and ``_status``."""
    rows = []
    for s in subjects:
        row: dict[str, Any] = {
            "subject": s.name,
            "kind": _kind(s),
        }
        for key in figure_keys():
            fig = s.figures.get(key)
            status = fig.status if fig is not None else NOT_RUN
            row[key] = fig.estimate if fig is not None else math.nan
            row[f"{key}_low"] = fig.low if fig is not None else math.nan
            row[f"{key}_high"] = fig.high if fig is not None else math.nan
            row[f"{key}_n"] = fig.n if fig is not None else None
            row[f"{key}_status"] = status
        p = s.provenance
        row["runs"] = p.get("runs")
        row["trustsim"] = p.get("trustsim")
        row["git"] = p.get("git")
        row["dates"] = p.get("dates")
        row["battery_size"] = p.get("battery_size")
        row["weak"] = p.get("weak", "")
        row["tokens"] = p.get("tokens")
        row["cost_usd"] = p.get("cost_usd")
        for fam, family in families().items():
            if family.card is None:
                continue
            bad, total = (p.get("invalid") or {}).get(fam, (0, 0))
            row[f"invalid_share_{fam}"] = bad / total if total else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = [
    "OK",
    "card_filename",
    "card_html",
    "cards_table",
    "compare_html",
    "figure_keys",
    "reliability_svg",
]
