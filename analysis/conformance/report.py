"""Write ``conformance.csv`` (one row per recorded game) and ``conformance.md`` (summary by field, by run)."""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from analysis.text import md_table

CSV_COLUMNS = (
    "run", "game", "game_id", "rounds", "agree", "agree_except_logging_bugs", "first_difference",
    "first_rule_difference", "fields", "reason",
)  # fmt: skip


def _row(g: Any) -> dict[str, Any]:
    return {
        "run": g.run,
        "game": g.game,
        "game_id": g.game_id,
        "rounds": g.rounds,
        "agree": str(g.agree).lower(),
        "agree_except_logging_bugs": str(g.agree_except_logging_bugs).lower(),
        "first_difference": g.first_difference,
        "first_rule_difference": g.first_rule_difference,
        "fields": ";".join(g.fields_differing),
        "reason": g.reason,
    }


def _pct(n: int, d: int) -> str:
    return f"{n:,} / {d:,} ({100 * n / d:.1f} %)" if d else "0 / 0"


def write_outputs(
    results: Sequence[Any],
    out: Path,
    *,
    rules: Any,
    n_runs: int,
    fields: Sequence[str],
    logging_bugs: dict[str, str],
) -> str:
    """Write both files under ``out`` (``fields`` in comparison order, ``logging_bugs``: field -> why);
    returns a one-line summary."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "conformance.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(_row(g) for g in results)

    n = len(results)
    agree = sum(g.agree for g in results)
    except_bugs = sum(g.agree_except_logging_bugs for g in results)
    compared: Counter[str] = Counter()
    games_compared: Counter[str] = Counter()
    games_differing: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: dict[str, str] = {}
    for g in results:
        for f, k in g.compared.items():
            compared[f] += k
            games_compared[f] += 1
        for f in g.fields_differing:
            games_differing[f] += 1
        for d in g.differences:
            kinds[d.field][d.kind] += 1
            reasons.setdefault(d.field, d.reason)

    lines = [
        "# Conformance of trustsim's escape-room rules with the reference study's recorded games",
        "",
        f"Rules replayed: `game.own_verify={rules.own_verify}`, `game.capsule_names={rules.capsule_names}`. "
        f"{n_runs} runs, {n:,} recorded games, {sum(g.rounds for g in results):,} rounds.",
        "",
        "Each game's start state is rebuilt from the log, each round's recorded decisions go through our rules "
        "with the recorded draws (volunteer chosen, seat eliminated) and the verifiers' recorded answers, and "
        "every field below is compared with what the log says happened. Dead seats' coins are compared under "
        "the reference's convention (0 once dead); see `docs/escape_room.md`.",
        "",
        f"- games agreeing with trustsim's rules (any difference is a documented reference logging bug): "
        f"**{_pct(except_bugs, n)}**",
        f"- games with a rule difference or an unexplained difference: **{n - except_bugs:,}**",
        f"- games whose log agrees in every field, the logging-bug fields included: {_pct(agree, n)} "
        f"(the reference code's logging bugs below touch {except_bugs - agree:,} of the agreeing games, so this "
        "count says nothing about the rules)",
        "",
        "## By field",
        "",
    ]
    rows = []
    for f in fields:
        if not games_compared[f]:
            continue
        kind = ", ".join(f"{c:,} {k.replace('_', ' ')}" for k, c in sorted(kinds[f].items())) or "—"
        note = f" ({reasons[f]})" if f in reasons and f not in logging_bugs else ""
        agreeing = _pct(games_compared[f] - games_differing[f], games_compared[f])
        rows.append([f"`{f}`", f"{compared[f]:,}", f"{games_compared[f]:,}", agreeing, f"{kind}{note}"])
    header = ["field", "comparisons", "games compared", "games agreeing", "differences: classification"]
    lines.append(md_table(header, rows, align="lrrrl"))
    exercised: Counter[str] = Counter()
    for g in results:
        exercised.update(g.exercised)
    if exercised:
        lines += ["", "Rule paths the recorded decisions exercised (all replayed through our rules):", ""]
        lines += [f"- {path}: {count:,}" for path, count in sorted(exercised.items())]
    lines += ["", "Known reference logging bugs (the log field is wrong, not the game):", ""]
    lines += [f"- `{f}`: {why.removeprefix('reference logging bug: ')}" for f, why in logging_bugs.items()]
    by_run: dict[str, list[Any]] = defaultdict(list)
    for g in results:
        by_run[g.run].append(g)
    lines += [
        "",
        "## By run",
        "",
    ]
    rows = []
    for run, games in sorted(by_run.items()):
        first = next(
            (f"game {g.game} {g.first_rule_difference}" for g in games if g.first_rule_difference), ""
        )
        agree_rules = sum(g.agree_except_logging_bugs for g in games)
        rows.append([str(run), str(len(games)), str(agree_rules), str(sum(g.agree for g in games)), first])
    header = ["run", "games", "agree with the rules", "identical in every logged field"]
    lines.append(md_table([*header, "first rule/unexplained difference"], rows, align="lrrrl"))
    (out / "conformance.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return summary_line(n, agree, except_bugs, len(logging_bugs))


def summary_line(games: int, agree: int, except_bugs: int, bug_fields: int) -> str:
    """The verdict: games agreeing with trustsim's rules, then those with a rule difference; the logging bugs
    of the reference code are named as the only other differences (not as games that "disagree")."""
    rule = games - except_bugs
    text = (
        f"{except_bugs:,} / {games:,} games agree with trustsim's rules, {rule:,} with a rule or unexplained "
        f"difference"
    )
    if except_bugs > agree:
        text += f"; the logs' other differences are the {bug_fields} documented logging bugs of the reference code"
    return text
