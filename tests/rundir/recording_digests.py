"""Digests of the tables (and events) that scripted jobs of every game write: the regression reference of the
recording fast paths (``tests/rundir/test_recording_identity.py``).

The golden digests live in ``recording_digests.json`` beside this file (those of the code before the fast
paths, HEAD 982b4b2, 2026-12-01, and every deliberate change since). A table's digest covers the columns listed
there (so a column added later does not change it) and leaves out ``run_id`` (it follows the config hash, which
a new config key changes without changing any result).

``python tests/rundir/recording_digests.py`` prints the digests of the current code (every column of every
table); ``python tests/rundir/recording_digests.py --write`` rewrites the golden file with them, keeping each
listed table's columns. Write it only when a change of results is intended, and say so in the commit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Scripted jobs that exercise every recorded path of the three fast games (strikes, memoryless games,
# random partner slots, revealed truth, the non-default rule variants, invalid requests, tournaments, noise,
# repeated trust games with confidence).
JOBS: dict[str, list[str]] = {
    "er_bayes": ["+experiment=mid2strike", "agent=bayes", "runs=3"],
    "er_bayes_reveal_random_slot": [
        "+experiment=3strike",
        "agent=bayes",
        "runs=2",
        "game.partner_slot=random",
        "game.reveal_after_game=true",
    ],
    "er_anchor_consensus": ["+experiment=anchor", "agent=consensus", "runs=2"],
    "er_always_verify": ["+experiment=recur", "agent=always_verify", "runs=2"],
    "er_random_variants": [
        "+experiment=1strike",
        "agent=random",
        "runs=3",
        "game.own_verify=illegal",
        "game.capsule_names=exact",
        "game.malformed_volunteer=die",
        "game.coins=1",
    ],
    "arena_tournament_noise": ["+experiment=ipd_tournament", "game.rounds=30", "game.noise=0.05", "runs=2"],
    "arena_match": ["+experiment=ipd", "runs=3"],
    "tg_one_shot": ["+experiment=trust_game", "game.pairs=60", "runs=2"],
    "tg_repeated": ["+experiment=trust_game_repeated", "runs=2"],
    "tg_random_unknown": [
        "+experiment=trust_game_repeated",
        "agent=tg_random",
        "game.horizon=unknown",
        "runs=2",
    ],
}


GOLDEN_FILE = Path(__file__).with_suffix(".json")


def load_golden(path: Path = GOLDEN_FILE) -> dict[str, dict[str, tuple[list[str], str]]]:
    """Per job and table: the columns the digest covers and the sha256 of those columns' rows."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {job: {t: (d["columns"], d["sha256"]) for t, d in tables.items()} for job, tables in data.items()}


def table_digest(path: Path, columns: list[str]) -> str:
    """sha256 of the table's rows restricted to ``columns`` (in that order), ``run_id`` left out."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    cols = [c for c in columns if c != "run_id"]
    writer.writerow(cols)
    for row in rows:
        writer.writerow([row[c] for c in cols])
    return hashlib.sha256(out.getvalue().encode()).hexdigest()


def run_digests(overrides: list[str], run_dir: Path) -> dict[str, dict[str, object]]:
    """Run one job; per table its columns and digest."""
    from trustsim import api

    result = api.run(None, [*overrides, "progress=false"], run_dir)
    assert result.status == "complete", (result.exit_code, result.failure)
    out: dict[str, dict[str, object]] = {}
    for path in sorted(run_dir.glob("*.csv")):
        with path.open(encoding="utf-8") as fh:
            columns = next(csv.reader(fh))
        out[path.stem] = {"columns": columns, "sha256": table_digest(path, columns)}
    return out


def dumps(digests: dict[str, dict[str, dict[str, object]]]) -> str:
    """The golden file's text: one line per table, so a changed digest is a one-line diff."""
    jobs = []
    for job, tables in digests.items():
        rows = ",\n".join(f"  {json.dumps(t)}: {json.dumps(d)}" for t, d in tables.items())
        jobs.append(f" {json.dumps(job)}: {{\n{rows}\n }}")
    return "{\n" + ",\n".join(jobs) + "\n}\n"


def current_digests(keep_columns: bool) -> dict[str, dict[str, dict[str, object]]]:
    """Run every job of :data:`JOBS`: per table its columns and digest. With ``keep_columns`` a job already in
    the golden file keeps its tables and their listed columns (a column added since does not enter a digest)."""
    import tempfile

    golden = load_golden() if keep_columns and GOLDEN_FILE.exists() else {}
    digests = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, overrides in JOBS.items():
            run_dir = Path(tmp) / name
            digests[name] = run_digests(overrides, run_dir)
            if name in golden:
                digests[name] = {
                    table: {"columns": columns, "sha256": table_digest(run_dir / f"{table}.csv", columns)}
                    for table, (columns, _) in golden[name].items()
                }
    return digests


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--write"]):
        raise SystemExit("usage: python tests/rundir/recording_digests.py [--write]")
    text = dumps(current_digests(keep_columns=bool(args)))
    if args:
        GOLDEN_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN_FILE.relative_to(REPO)}")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
