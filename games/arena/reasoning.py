"""The arena's reasoning texts for post-hoc confidence extraction (``python -m trustsim.extract --kind arena``):
moves whose reasoning states no probability. Declared as ``GameSpec.reasoning``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from trustsim.contract import ReasoningSource
from trustsim.extract.items import ReasoningItem
from trustsim.extract.sources import run_events


def arena_run(run_dir: Path, only_missing: bool = True) -> Iterator[ReasoningItem]:
    """Items from an arena run directory: ``move`` events with reasoning (by default only those whose
    stated probability is missing). The outcome is the opponent's executed move that round."""
    opened = run_events(run_dir)
    if opened is None:
        return
    manifest, events = opened
    run_id = str(manifest.get("run_id") or run_dir.name)
    moves: dict[tuple, dict] = {}
    starts: dict[str, dict] = {}
    for e in events:
        if e.get("type") == "match_start":
            starts[e["match"]] = e
        elif e.get("type") == "move":
            moves[(e["match"], e["round"], e["seat"])] = e
    for (match, rnd, seat), e in sorted(moves.items()):
        reasoning = e.get("reasoning") or ""
        if not reasoning.strip() or (only_missing and e.get("p_opponent_cooperates") is not None):
            continue
        other = "B" if seat == "A" else "A"
        opp = moves.get((match, rnd, other))
        start = starts.get(match, {})
        if opp is None:
            continue
        labels = start.get("players", {})
        yield ReasoningItem(
            text=reasoning.strip(),
            question="that the other player cooperates in this round",
            outcome=int(opp["executed"] == "C"),
            row={
                "run_id": run_id,
                "game_type": "arena",
                "cluster": match,
                "model": start.get("models", {}).get(seat, ""),
                "agent": start.get("agents", {}).get(seat, ""),
                "memory": "",
                "schedule": "",
                "subject": labels.get(other, ""),
                "subject_kind": "opponent",
                "game": start.get("match_index", ""),
                "round": rnd,
                "item": seat,
            },
        )


REASONING = {"arena": ReasoningSource(arena_run)}
"""``--kind`` name -> source: arena run directories."""
