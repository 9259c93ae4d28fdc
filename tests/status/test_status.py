"""``python -m trustsim.status``: a sweep with a complete, a failed, a stale and a running job."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from trustsim import status as st
from trustsim.rundir import LOCK

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
MATCH_UNIT_EVENTS = {
    "start": "match_start", "end": "match_end", "key": ["match"], "label": "match", "event_key": "{match}",
    "table_keys": {},
}  # fmt: skip
MATCH_UNIT = {**MATCH_UNIT_EVENTS, "counted": "matches", "per_end": 1, "planned": None}
SESSION_UNIT_EVENTS = {
    "start": "session_start", "end": "session_end", "key": ["session"], "label": "session",
    "event_key": "s{session}", "table_keys": {},
}  # fmt: skip


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=300
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def make_running(job: Path, pid: int, games_ended: int) -> None:
    """Turn a finished job directory into one whose manifest says ``running`` with a lock held by ``pid``:
    the events end after ``games_ended`` games, counts and LLM figures are not written yet."""
    manifest = json.loads((job / "manifest.json").read_text())
    manifest.update(status="running", failure=None, counts={}, tables={})
    manifest["timings"].update(finished=None, wall_s=None)
    (job / "manifest.json").write_text(json.dumps(manifest))
    kept, ended = [], 0
    for line in (job / "events.jsonl").read_text().splitlines(keepends=True):
        if ended == games_ended:
            break
        kept.append(line)
        ended += json.loads(line)["type"] == "game_end"
    (job / "events.jsonl").write_text("".join(kept) + '{"seq": 99999, "type": "game_e')  # a cut last line
    holder = {
        "pid": pid,
        "host": socket.gethostname(),
        "started": "2026-01-01T00:00:00+00:00",
        "command": "x",
    }
    (job / LOCK).write_text(json.dumps(holder) + "\n")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real two-job sweep (one complete, one failed at start) plus a stale and a running job made from the
    complete one, and a damaged manifest."""
    root = tmp_path_factory.mktemp("status")
    sweep_dir = root / "sweep"
    proc = cli(
        "trustsim",
        "-m",
        "+experiment=mid2strike",
        "agent=bayes",
        "game.games=3,0",
        "progress=false",
        f"hydra.sweep.dir={sweep_dir}",
        "hydra/launcher=basic",
    )  # the basic launcher runs the valid job; trustsim's refuses the whole sweep first
    assert proc.returncode == 1, proc.stderr  # the failed job makes the sweep exit 1
    assert (sweep_dir / "jobs.csv").is_file()
    complete, _failed = sorted(p for p in sweep_dir.iterdir() if p.is_dir())
    shutil.copytree(complete, sweep_dir / "002_stale")
    make_running(sweep_dir / "002_stale", dead_pid(), games_ended=2)
    shutil.copytree(complete, sweep_dir / "003_running")
    make_running(sweep_dir / "003_running", os.getpid(), games_ended=1)
    (sweep_dir / "004_damaged").mkdir()
    (sweep_dir / "004_damaged" / "manifest.json").write_text('{"status": "comp')
    return sweep_dir


def job_dir(sweep: Path, number: str) -> Path:
    return next(sweep.glob(f"{number}_*"))


def by_name(jobs: list[st.JobStatus]) -> dict[str, st.JobStatus]:
    return {Path(j.path).name[:3]: j for j in jobs}


@pytest.mark.slow
def test_statuses_units_and_reasons(sweep: Path) -> None:
    jobs = by_name(st.collect([sweep]))
    assert {k: j.status for k, j in jobs.items()} == {
        "000": "complete", "001": "failed", "002": "stale", "003": "running", "004": "damaged",
    }  # fmt: skip
    assert (jobs["000"].done, jobs["000"].planned, jobs["000"].unit) == (3, 3, "games")
    assert "game.games" in jobs["001"].reason and jobs["001"].done == 0
    assert (jobs["002"].done, jobs["002"].planned) == (2, 3)  # from events.jsonl; planned from the config
    assert "process is gone" in jobs["002"].reason and "pid" in jobs["002"].reason
    assert (jobs["003"].done, jobs["003"].planned) == (1, 3)
    assert jobs["003"].llm is None and jobs["000"].llm is not None
    assert "not valid JSON" in jobs["004"].reason
    assert all(j.sweep == str(sweep.resolve()) for j in jobs.values())


@pytest.mark.slow
def test_lock_file_gone_is_stale(sweep: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(sweep / "003_running", job)
    assert st.job_status(job).status == "running"
    (job / LOCK).unlink()
    stale = st.job_status(job)
    assert stale.status == "stale" and "lock file is gone" in stale.reason


def test_holder_on_another_host_counts_as_running(sweep: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(sweep / "002_stale", job)
    holder = json.loads((job / LOCK).read_text())
    (job / LOCK).write_text(json.dumps({**holder, "host": "some-other-host"}))
    assert st.job_status(job).status == "running"


def test_table_totals_and_exit_code(sweep: Path) -> None:
    proc = cli("trustsim.status", str(sweep))
    assert proc.returncode == 1, proc.stderr  # a job failed
    assert "Traceback" not in proc.stderr and "004_damaged/manifest.json: not valid JSON" in proc.stderr
    out = proc.stdout
    rows = {
        line.split()[0].split("/")[-1][:3]: line.split()
        for line in out.splitlines()
        if line.startswith("sweep/0")
    }
    assert rows["000"][1:4] == ["escape_room", "complete", "3/3"]
    assert rows["001"][2:4] == ["failed", "-"]  # a config error: the job never started, it has no units
    assert rows["002"][2:4] == ["stale", "2/3"] and rows["003"][2:4] == ["running", "1/3"]
    assert rows["003"][5:9] == ["-", "-", "-", "-"]  # LLM figures not recorded until the job ends
    assert rows["004"][2] == "damaged"
    assert "game.games=0: failed: config error at 'game.games'" in out and "re-run the job's command" in out
    totals = [line for line in out.splitlines() if line.startswith(("sweep ", "total:"))]
    assert len(totals) == 2
    for line in totals:
        assert "5 job(s) (1 complete, 1 damaged, 1 failed, 1 running, 1 stale)" in line
        assert "6/9 games" in line  # the failed job planned nothing


def test_a_relative_path_names_each_job_inside_its_sweep(sweep: Path) -> None:
    for arg in (sweep.name, ".", f"../{sweep.parent.name}"):  # the sweep, its parent, a path going up
        proc = cli("trustsim.status", arg, cwd=sweep if arg == "." else sweep.parent)
        jobs = [line.split()[0] for line in proc.stdout.splitlines() if " escape_room " in line]
        assert jobs and all(name.startswith("sweep/00") and name.count("/") == 1 for name in jobs), (
            proc.stdout
        )


def test_json_output(sweep: Path) -> None:
    proc = cli("trustsim.status", "--json", str(job_dir(sweep, "000")), str(sweep / "002_stale"))
    assert proc.returncode == 0, proc.stderr  # no failed job among these
    data = json.loads(proc.stdout)
    assert [j["status"] for j in data["jobs"]] == ["complete", "stale"]
    assert data["totals"]["done"] == {"games": 5} and data["totals"]["planned"] == {"games": 6}
    assert data["failed"] == 0 and list(data["sweeps"]) == [str(sweep.resolve())]


def test_llm_totals_sum_over_jobs(tmp_path: Path) -> None:
    for i, (sent, cached, cost) in enumerate([(3, 1, 0.25), (2, 5, 0.5)]):
        job = tmp_path / f"run{i}"
        job.mkdir()
        manifest = {
            "run_id": f"r{i}", "game": "arena", "status": "complete", "runs": 2, "unit": MATCH_UNIT,
            "config": {"game": {"type": "arena", "mode": "tournament"}},
            "counts": {"matches": 6}, "timings": {"wall_s": 30.0},
            "llm": {"calls_sent": sent, "cache_hits": cached, "prompt_tokens": 100 * (i + 1),
                    "completion_tokens": 10, "cost_usd": cost},
        }  # fmt: skip
        (job / "manifest.json").write_text(json.dumps(manifest))
    data = st.summarize(st.collect([tmp_path]))
    assert data["sweeps"] == {}  # no jobs.csv: loose runs
    llm = data["totals"]["llm"]
    assert (llm["calls_sent"], llm["cache_hits"], llm["prompt_tokens"], llm["cost_usd"]) == (5, 6, 300, 0.75)
    assert data["totals"]["planned"] == {"matches": 12}  # a complete tournament played its whole plan
    assert "total: 2 job(s) (2 complete); 12/12 matches; LLM calls sent 5, cached 6" in st.render(
        st.collect([tmp_path])
    )


def test_no_runs_and_missing_path_exit_2(tmp_path: Path) -> None:
    assert st.main([str(tmp_path)]) == 2
    assert st.main([str(tmp_path / "nope")]) == 2


def test_watch_refreshes_until_interrupted(sweep: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    calls = []

    def fake_sleep(seconds: float) -> None:
        calls.append(seconds)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(st.time, "sleep", fake_sleep)
    assert st.main([str(job_dir(sweep, "000")), "--watch", "0.5"]) == 0
    assert calls == [0.5, 0.5] and capsys.readouterr().out.count("total:") == 2


@pytest.mark.parametrize(
    ("overrides", "planned"),
    [
        (["+experiment=mid2strike", "agent=bayes", "game.games=4"], 8),
        (["+experiment=mid2strike", "agent=bayes", "schedule.pattern=TTFFT"], 10),  # the pattern's length
        (["+experiment=ipd", "agent=ipd_tit_for_tat"], 2),
        (
            [
                "+experiment=ipd",
                "agent=ipd_tit_for_tat",
                "game.mode=tournament",
                "game.self_play=false",
                "game.players=[ipd_always_defect,ipd_always_cooperate]",
            ],
            6,
        ),  # 3 pairings of 3 players, per run
        (["game=trust_game", "agent=tg_reciprocal", "game.pairs=5"], 10),
        (["+experiment=reliance", "agent=oracle", "game.limit=7"], 14),
    ],
)
def test_the_job_records_its_planned_units(compose, overrides, planned) -> None:
    """The plan of 2 runs, computed from the validated config at start (``GameSpec.unit.per_run``), is what
    the manifest's ``unit`` records and status reads."""
    from trustsim.config import validate_config

    valid = validate_config(compose([*overrides, "runs=2"]))
    record = valid.game.unit.record(valid)
    assert record["planned"] == planned and record["counted"] == valid.game.unit.counted
    assert st.recorded_unit({"unit": record}).planned == planned


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"counted": "matches", "per_end": 1, "planned": 4}, ("matches", 1, 4)),
        ({"counted": "matches", "per_end": "2", "planned": True}, ("matches", 1, None)),  # damaged values
        ({}, ("match", 1, None)),  # written before the manifest carried the plan: the unit's label, no plan
    ],
)
def test_recorded_unit_reads_old_and_damaged_manifests(record, expected) -> None:
    unit = st.recorded_unit({"unit": {**MATCH_UNIT_EVENTS, **record}})
    assert (unit.counted, unit.per_end, unit.planned) == expected and unit.end == "match_end"
    assert st.recorded_unit({"unit": {"counted": "matches"}}) is None  # no event bracket: no units
    assert st.recorded_unit({}) is None


def test_an_old_run_directory_is_shown_without_a_plan(tmp_path: Path) -> None:
    """A manifest without ``counted``: its end events count, named by the unit's label, planned unknown."""
    manifest = {"run_id": "o", "game": "arena", "status": "failed", "runs": 3, "unit": MATCH_UNIT_EVENTS}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    events = [{"seq": i, "type": t} for i, t in enumerate(["match_start", "match_end", "match_start"])]
    (tmp_path / "events.jsonl").write_text(
        "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    )
    job = st.job_status(tmp_path)
    assert (job.status, job.unit, job.done, job.planned) == ("failed", "match", 1, None)
    assert "1/? match" in st.render([job])


def test_a_running_trust_game_counts_pairs_per_ended_session(tmp_path: Path) -> None:
    manifest = {
        "run_id": "t",
        "game": "trust_game",
        "status": "running",
        "runs": 3,
        "unit": {**SESSION_UNIT_EVENTS, "counted": "pairs", "per_end": 4, "planned": 12},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    events = [{"seq": i, "type": t} for i, t in enumerate(["session_start", "session_end", "session_start"])]
    (tmp_path / "events.jsonl").write_text(
        "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    )
    job = st.job_status(tmp_path)  # no lock: stale, counted from the events
    assert (job.status, job.unit, job.done, job.planned) == ("stale", "pairs", 4, 12)
